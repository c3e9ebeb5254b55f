"""The resource-aware scheduler against a live cluster: supervisors report their capacity in
ZooKeeper, nimbus places topologies so none is exceeded, one that does not fit says so in
getTopologyInfo, getClusterInfo and `squall list`, and a more important topology evicts a
less important one by the documented rule (nimbus/scheduling/cluster_scheduler.py)."""

from collections import Counter

import pytest

from squall.local import LocalCluster, wait_for
from squall.records import Assignment, SupervisorInfo, decode
from squall.submit import submit_file

from .conftest import TOPOLOGIES, squall

SIZED = TOPOLOGIES / "sized.py"
MEMORY = "topology.component.resources.onheap.memory.mb"


@pytest.fixture(scope="module")
def cluster(tmp_path_factory):
    # a long task timeout: nothing here moves because a worker was slow to start
    conf = {"nimbus.task.timeout.secs": 120, "nimbus.task.launch.secs": 120}
    capacities = {
        1: {"supervisor.memory.capacity.mb": 2000.0},
        2: {"supervisor.memory.capacity.mb": 500.0},
    }
    directory = tmp_path_factory.mktemp("resources")
    with LocalCluster(directory, supervisors=2, conf=conf, supervisor_confs=capacities) as c:
        yield c


def submit(cluster, client, name, workers, memory_mb, priority):
    # topology.ras.workers.cap: this test places by topology.workers (squall's cap); Storm's
    # packing, the default, is tested in tests/unit/test_ras_packing.py
    overrides = {"topology.workers": workers, MEMORY: memory_mb, "topology.priority": priority}
    overrides["topology.ras.workers.cap"] = True
    submit_file(client, SIZED, cluster.client_conf(), name=name, overrides=overrides)
    return {t.name: t.id for t in client.getClusterInfo().topologies}[name]


def placement(zk, tid):
    data, _ = zk.get(f"/squall/assignments/{tid}")
    return decode(Assignment, data, tid).task_slots


def tasks_per_supervisor(zk, tid):
    return Counter(slot[0] for slot in placement(zk, tid).values())


def statuses(client):
    return {t.name: t.sched_status for t in client.getClusterInfo().topologies}


def test_three_topologies_by_capacity_one_cannot_fit_then_an_eviction(cluster, zk):
    info = decode(SupervisorInfo, zk.get("/squall/supervisors/supervisor2")[0], "supervisor2")
    assert (info.memory_capacity_mb, info.cpu_capacity) == (500.0, 400.0)

    with cluster.client() as client:
        # a: 2 x 600 MB; only supervisor1 (2000 MB) holds a 600 MB task, so both go there,
        # although slot counting alone would spread a's two workers over both supervisors
        a = submit(cluster, client, "a", workers=2, memory_mb=600, priority=0)
        assert tasks_per_supervisor(zk, a) == {"supervisor1": 2}
        assert len(set(placement(zk, a).values())) == 2
        # b: 2 x 300 MB in two workers, one per supervisor (800 and 500 MB left)
        b = submit(cluster, client, "b", workers=2, memory_mb=300, priority=1)
        assert tasks_per_supervisor(zk, b) == {"supervisor1": 1, "supervisor2": 1}
        # c: 2 x 300 MB in one worker; 500 and 200 MB are left: it cannot fit, and is not
        # placed at all (no partial placement)
        c = submit(cluster, client, "c", workers=1, memory_mb=300, priority=2)
        assert placement(zk, c) == {}
        sched = client.getTopologyInfo(c).sched_status
        assert sched.startswith("Not enough resources to schedule"), sched
        assert "600 MB" in sched
        assert client.getTopologySummary(c).sched_status == sched  # Storm 2's UI call too
        # "N of M tasks starting" is added until their workers beat (nimbus/reads/run_state.py)
        wait_for(
            lambda: statuses(client)["a"] == statuses(client)["b"] == "Fully Scheduled",
            60,
            "a and b to run, fully scheduled",
        )

        listed = squall(cluster, "list")
        assert listed.returncode == 0, listed.stderr
        assert f"c ({c}): Not enough resources to schedule: needs 600 MB" in listed.stdout
        assert f"({a}):" not in listed.stdout  # fully scheduled: no line

        # d (priority 0) needs 2 x 400 MB in two workers: it fits only if b (priority 1) goes.
        # Its submit places nothing (others keep their places); the next monitor round
        # reschedules every topology from one snapshot and evicts b, never a (priority 0, a
        # peer) nor c (holds nothing).
        before_a = placement(zk, a)
        d = submit(cluster, client, "d", workers=2, memory_mb=400, priority=0)
        wait_for(lambda: placement(zk, b) == {} and placement(zk, d), 60, "d to evict b")
        assert tasks_per_supervisor(zk, d) == {"supervisor1": 1, "supervisor2": 1}
        assert placement(zk, a) == before_a  # the more important peer did not move
        assert placement(zk, c) == {}
        # "Evicted ..." in the round that evicted it, "Not enough ..." in the rounds after;
        # nimbus may answer with the status of the round before for a moment after the
        # assignment is gone from ZooKeeper (the round's writes go first)
        evicted = ("Evicted to make room for " + d, "Not enough")
        wait_for(
            lambda: client.getTopologyInfo(b).sched_status.startswith(evicted),
            30,
            "b's status to say it was evicted",
        )
        wait_for(lambda: statuses(client)["d"] == "Fully Scheduled", 60, "d to run")
