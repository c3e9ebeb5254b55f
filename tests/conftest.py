"""Marks for the whole suite: the tests under integration/ and security/ run real servers
(ZooKeeper, nimbus, supervisors, Spark) and are marked `integration`, so
`pytest -m 'not integration'` runs the pure unit tests alone.

Under pytest-xdist (`make test` runs two pytest processes) each process draws its free ports
from a range of its own (squall.zk.server.free_port): a supervisor's slot ports are handed
out when it starts and bound only when a worker does, and the other process must not take
one meanwhile."""

import os
from pathlib import Path

import pytest

from squall.zk.server import PORT_RANGE_ENV

WITH_SERVERS = (Path(__file__).parent / "integration", Path(__file__).parent / "security")
TEST_PORTS = (20000, 32000)  # below Linux's ephemeral ports (32768-60999), shared out
EPHEMERAL = Path("/proc/sys/net/ipv4/ip_local_port_range")


def _own_ports() -> None:
    """This process's slice of TEST_PORTS. None (the kernel's ports) for a process xdist
    started in place of one that died (gw2 of two: its slice would lie beyond TEST_PORTS),
    or where the kernel's own ports reach into TEST_PORTS."""
    worker = os.environ.get("PYTEST_XDIST_WORKER", "")  # gw0, gw1, ...
    count = int(os.environ.get("PYTEST_XDIST_WORKER_COUNT", "1"))
    if not worker.startswith("gw") or not worker[2:].isdecimal() or int(worker[2:]) >= count:
        return
    try:
        if int(EPHEMERAL.read_text().split()[0]) < TEST_PORTS[1]:
            return
    except (OSError, ValueError, IndexError):
        pass  # not Linux: the kernel's ports are its own business
    width = (TEST_PORTS[1] - TEST_PORTS[0]) // count
    low = TEST_PORTS[0] + int(worker[2:]) * width
    os.environ[PORT_RANGE_ENV] = f"{low}-{low + width - 1}"  # its servers inherit it too


_own_ports()

# The JVMs the tests start (ZooKeeper, local Spark, Spark Connect and standalone servers) live
# for seconds to minutes, where the optimising JIT's compiler threads cost more than they
# give: with C1 only and the serial GC a local SparkSession and one job took 32 s instead of
# 85 s on a loaded 2-core host (tests/integration/test_spark_remote.py). Set before any server
# starts, so all inherit it; a value already in the environment wins.
QUICK_JVM = "-XX:TieredStopAtLevel=1 -XX:+UseSerialGC"
os.environ.setdefault("JAVA_TOOL_OPTIONS", QUICK_JVM)


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    for item in items:
        if any(directory in item.path.parents for directory in WITH_SERVERS):
            item.add_marker(pytest.mark.integration)
