"""Nimbus's core against a live cluster: rebalance through the CLI, reassignment as soon as a
supervisor leaves or joins, and a delayed kill that survives a nimbus restart."""

import json
import time

import pytest

from squall import thrift_api as T
from squall.local import LocalCluster, wait_for
from squall.nimbus.store import Store
from squall.records import Assignment, WorkerBeat, decode
from squall.submit import submit_file

from .conftest import TOPOLOGIES, squall

TINY = TOPOLOGIES / "tiny.py"


@pytest.fixture(scope="module")
def cluster(tmp_path_factory):
    # a long task timeout: anything that moves within it was moved by a watch, not a timeout
    conf = {"nimbus.task.timeout.secs": 120, "nimbus.task.launch.secs": 120}
    with LocalCluster(tmp_path_factory.mktemp("live"), supervisors=2, conf=conf) as c:
        yield c


def assignment(zk, client, name):
    tid = {t.name: t.id for t in client.getClusterInfo().topologies}[name]
    data, _ = zk.get(f"/squall/assignments/{tid}")
    return decode(Assignment, data, tid)


def test_rebalance_resizes_and_the_cli_waits_until_it_runs(cluster, zk):
    with cluster.client() as client:
        submit_file(client, TINY, cluster.client_conf(), name="resize")
        before = assignment(zk, client, "resize")
        assert len(before.task_slots) == 4 and len(before.slots()) == 2  # no acker: spouts track

    result = squall(cluster, "rebalance", "resize", "-w", "1", "-n", "3", "-e", "sink=4")
    assert result.returncode == 0, result.stderr
    assert "runs 6 tasks on 3 workers (ACTIVE)" in result.stdout
    assert "every worker of it restarts" in result.stdout  # what a rebalance does, said
    assert "/None" not in result.stderr  # a bar with no total yet shows no "0/None"

    with cluster.client() as client:
        after = assignment(zk, client, "resize")
        assert len(after.task_slots) == 6 and len(after.slots()) == 3
        # getTopology reports the parallelism as rebalanced, not as submitted
        topology = client.getTopology("resize")
        assert topology.bolts["sink"].common.parallelism_hint == 4
        assert "__acker" not in topology.bolts
        # The monitor (every 2 s here) leaves an unchanged assignment alone: across more than
        # three monitor periods, measured by the workers' own beats, the node is not rewritten.
        tid = {t.name: t.id for t in client.getClusterInfo().topologies}["resize"]
        _, stat = zk.get(f"/squall/assignments/{tid}")
        beats = f"/squall/taskbeats/{tid}"
        seq = {c: zk.get(f"{beats}/{c}")[0] for c in zk.get_children(beats)}

        def beats_advanced_by_seven():
            now = {c: json.loads(zk.get(f"{beats}/{c}")[0])["seq"] for c in seq}
            return all(now[c] >= json.loads(seq[c])["seq"] + 7 for c in seq)

        wait_for(beats_advanced_by_seven, 60, "seven more heartbeats")
        assert zk.get(f"/squall/assignments/{tid}")[1].version == stat.version
        assert {s[0] for s in after.slots()} == {"supervisor1", "supervisor2"}
        assert squall(cluster, "rebalance", "resize", "-e", "nope=2").returncode == 1
        client.killTopologyWithOpts("resize", T.KillOptions(wait_secs=0))
        wait_for(lambda: client.isTopologyNameAllowed("resize"), 60, "resize removed")


def test_supervisor_leaving_and_joining_reassigns_at_once(cluster, zk):
    with cluster.client() as client:
        submit_file(client, TINY, cluster.client_conf(), name="moves")
        before = assignment(zk, client, "moves")
        assert {s[0] for s in before.slots()} == {"supervisor1", "supervisor2"}

        cluster.stop_process("supervisor2")
        wait_for(
            lambda: {s[0] for s in assignment(zk, client, "moves").slots()} == {"supervisor1"},
            30,  # well inside the 120 s task timeout: the /supervisors watch did this
            "tasks of the lost supervisor to move",
        )
        during = assignment(zk, client, "moves")
        kept = [t for t, s in before.task_slots.items() if s[0] == "supervisor1"]
        assert all(during.task_slots[t] == before.task_slots[t] for t in kept)

        cluster.start_supervisor(3)
        wait_for(
            lambda: "supervisor3" in {s[0] for s in assignment(zk, client, "moves").slots()},
            30,
            "the joining supervisor to get work without a manual rebalance",
        )
        client.killTopologyWithOpts("moves", T.KillOptions(wait_secs=0))
        wait_for(lambda: client.isTopologyNameAllowed("moves"), 60, "moves removed")


def test_delayed_kill_survives_a_nimbus_restart(cluster, zk):
    with cluster.client() as client:
        submit_file(client, TINY, cluster.client_conf(), name="later")
        client.killTopologyWithOpts("later", T.KillOptions(wait_secs=12))
    cluster.restart_nimbus()
    with cluster.client() as client:
        statuses = {t.name: t.status for t in client.getClusterInfo().topologies}
        assert statuses.get("later") == "KILLED"  # not removed early, not forgotten
        wait_for(lambda: client.isTopologyNameAllowed("later"), 60, "the delayed removal")
    assert not [c for c in zk.get_children("/squall/storms") if c.startswith("later-")]


def worker_beats(zk, tid):
    parent = f"/squall/taskbeats/{tid}"
    return {c: decode(WorkerBeat, zk.get(f"{parent}/{c}")[0], c) for c in zk.get_children(parent)}


def test_a_rebalance_that_renumbers_restarts_every_worker_across_a_failover(cluster, zk):
    """numbers=1 moves sink's tasks from 3-4 to 2-3. Each worker routes and acks by the
    task -> component map it read at its start, so every worker must restart, also one whose
    own task numbers stayed. Nimbus is restarted during the wait, after the counts were
    written and before /tasks were: the new leader must find /tasks stale and rewrite them."""
    with cluster.client() as client:
        submit_file(client, TINY, cluster.client_conf(), name="renumber")
        tid = {t.name: t.id for t in client.getClusterInfo().topologies}["renumber"]
        wait_for(
            lambda: (
                len(worker_beats(zk, tid)) == 2
                and min(b.uptime_secs for b in worker_beats(zk, tid).values()) >= 3
            ),
            60,
            "both workers to run for three seconds",
        )
        client.rebalance("renumber", T.RebalanceOptions(wait_secs=8, num_executors={"numbers": 1}))
    asked = time.time()
    cluster.restart_nimbus()
    with cluster.client() as client:
        wait_for(lambda: len(assignment(zk, client, "renumber").task_slots) == 3, 60, "rebalance")
        after = assignment(zk, client, "renumber")
    tasks = f"/squall/tasks/{tid}"
    assert {int(c): zk.get(f"{tasks}/{c}")[0].decode() for c in zk.get_children(tasks)} == {
        1: "numbers",
        2: "sink",
        3: "sink",
    }

    def every_worker_restarted():
        beats = worker_beats(zk, tid)
        # started after the rebalance was asked for: a worker's start is its beat's time less
        # its uptime, each truncated to the second (so within a second); the old workers
        # had run three seconds before it was asked
        fresh = {c: b for c, b in beats.items() if b.time_secs - b.uptime_secs >= asked - 1}
        wanted = {f"{node}-{port}": after.tasks_on((node, port)) for node, port in after.slots()}
        return {c: sorted(b.tasks) for c, b in fresh.items()} == wanted

    wait_for(every_worker_restarted, 60, "every worker restarted with the new numbering")
    # a worker that saw its tasks change first and stopped itself did not fail
    errors = f"/squall/errors/{tid}"
    reports = zk.get_children(errors) if zk.exists(errors) else []
    texts = [zk.get(f"{errors}/{c}")[0].decode() for c in reports]
    assert not [t for t in texts if "exited with code" in t]
    with cluster.client() as client:
        client.killTopologyWithOpts("renumber", T.KillOptions(wait_secs=0))
        wait_for(lambda: client.isTopologyNameAllowed("renumber"), 60, "renumber removed")


def test_startup_cleans_code_without_storms_and_storms_without_code(cluster, zk):
    store = Store(cluster.base_conf()["nimbus.store.url"], source="test")
    store.save_topology("orphan-1-1", "orphan", {}, {}, b"code", 0)
    zk.create("/squall/storms/ghost-1-1", b"{}")
    zk.create("/squall/assignments/ghost-1-1", b"{}")
    cluster.restart_nimbus()
    # reads are answered while the new leader still prepares: wait for its clean-up
    wait_for(lambda: "orphan-1-1" not in store.topology_ids(), 30, "the orphan code removed")
    store.close()
    wait_for(lambda: not zk.exists("/squall/storms/ghost-1-1"), 30, "the ghost storm removed")
    assert not zk.exists("/squall/assignments/ghost-1-1")
