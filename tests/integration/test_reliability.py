"""At-least-once processing with a worker killed by SIGKILL mid-run: every input line is
counted at least once, the idempotent sink ends exact, and the spouts resume from their
committed offsets through the seed's owners/offsets registry."""

import os
import random
import signal
from collections import Counter

import pytest

from squall import thrift_api as T
from squall.local import LocalCluster, topology_id, wait_for
from squall.records import Assignment, decode
from squall.sinks import IdempotentFileSink
from squall.submit import submit_file

from .conftest import TOPOLOGIES

PARTITIONS, LINES = 4, 1500
WORDS = ["storm", "spark", "zookeeper", "thrift", "nimbus", "squall", "tuple", "bolt"]


@pytest.fixture(scope="module")
def cluster(tmp_path_factory):
    conf = {"supervisor.monitor.frequency.secs": 1}
    with LocalCluster(tmp_path_factory.mktemp("reliable"), supervisors=2, conf=conf) as c:
        yield c


def make_input(directory):
    rng = random.Random(42)
    expected = Counter()
    directory.mkdir()
    for p in range(PARTITIONS):
        lines = [" ".join(rng.choices(WORDS, k=rng.randint(1, 6))) for _ in range(LINES)]
        (directory / f"part-{p}").write_text("\n".join(lines) + "\n")
        for line in lines:
            expected.update(line.split())
    return expected


def committed(zk, group):
    base = f"/squall/consumers/{group}/offsets/files"
    if not zk.exists(base):
        return 0
    return sum(int(zk.get(f"{base}/{p}")[0]) for p in zk.get_children(base))


def test_kill_9_a_spout_worker_mid_run(cluster, tmp_path, monkeypatch):
    expected = make_input(tmp_path / "input")
    out = tmp_path / "out"
    monkeypatch.setenv("SQUALL_TEST_INPUT", str(tmp_path / "input"))
    zk = cluster.zk_client("nimbus")
    try:
        with cluster.client() as client:
            submit_file(
                client,
                TOPOLOGIES / "partitioned.py",
                cluster.client_conf(),
                overrides={"topology.output.dir": str(out)},
            )
            tid = topology_id(client, "partitioned")

        total = PARTITIONS * LINES
        wait_for(lambda: committed(zk, "kill-test") >= total // 10, 180, "a tenth committed")
        assert committed(zk, "kill-test") < total, "finished before the kill: input too small"

        assignment = decode(Assignment, zk.get(f"/squall/assignments/{tid}")[0], tid)
        spout_tasks = [
            int(t)
            for t in zk.get_children(f"/squall/tasks/{tid}")
            if zk.get(f"/squall/tasks/{tid}/{t}")[0] == b"lines"
        ]
        node, port = assignment.task_slots[spout_tasks[0]]
        pid_file = cluster.directory / node / "supervisor" / "workers" / f"{tid}-{port}.pid"
        pid = int(pid_file.read_text())
        os.kill(pid, signal.SIGKILL)

        def restarted():
            return pid_file.exists() and int(pid_file.read_text()) != pid

        wait_for(restarted, 60, "the supervisor to restart the killed worker")

        def every_line_counted():
            keys = IdempotentFileSink.read(out, "sink")
            return len({(k[0], k[1]) for k in keys}) == total

        wait_for(every_line_counted, 300, "every input line to reach the sink")
        rows = IdempotentFileSink.read(out, "sink")
        got = Counter()
        for row in rows.values():
            got[row["word"]] += row["count"]
        assert got == expected
        # the spouts resumed and finish every partition (offsets commit once a second)
        wait_for(lambda: committed(zk, "kill-test") == total, 60, "every offset committed")

        with cluster.client() as client:
            client.killTopologyWithOpts("partitioned", T.KillOptions(wait_secs=0))
    finally:
        zk.stop()
        zk.close()
