"""One real local cluster (ZooKeeper server, nimbus and two supervisors as processes) for
the integration tests of a module; everything is stopped by PID, also on failure."""

import subprocess
import sys
from pathlib import Path

import pytest

from squall.local import LocalCluster
from squall.zk.server import ZooKeeperServer

HERE = Path(__file__).parent
TOPOLOGIES = HERE / "topologies"
EXAMPLES = Path(__file__).parents[2] / "examples"


@pytest.fixture(scope="module")
def cluster(tmp_path_factory):
    with LocalCluster(tmp_path_factory.mktemp("cluster"), supervisors=2) as c:
        yield c


@pytest.fixture(scope="module")
def zk_server(tmp_path_factory):
    """A bare ZooKeeper server of the module's own (no nimbus, no ACLs), for the tests of
    reads and writes against ZooKeeper itself."""
    server = ZooKeeperServer(tmp_path_factory.mktemp("zk")).start()
    try:
        yield server
    finally:
        server.stop()


def squall(cluster, *args: str) -> subprocess.CompletedProcess:
    """Run the `squall` command against the cluster's nimbus, as its admin identity."""
    command = [sys.executable, "-m", "squall.cli", "--config", str(cluster.client_conf_file())]
    return subprocess.run(
        [*command, "--nimbus", f"127.0.0.1:{cluster.nimbus_port}", *args],
        capture_output=True,
        text=True,
        timeout=300,
    )


@pytest.fixture
def zk(cluster):
    """A ZooKeeper client of the module's cluster, logged in as both roles (nimbus and
    supervisor): it reads everything and can plant what either could write."""
    client = cluster.zk_client("nimbus", "supervisor")
    yield client
    client.stop()
    client.close()
