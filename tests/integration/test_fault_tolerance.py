"""Chaos with real processes: two nimbuses, two supervisors, a ZooKeeper server; leaders
killed and frozen, workers hung, supervisors killed, ZooKeeper restarted."""

import contextlib
import json
import os
import signal
from pathlib import Path

import pytest
from kazoo.client import KazooClient
from thriftpy2.thrift import TApplicationException

from squall import thrift_api as T
from squall.local import LocalCluster, wait_for
from squall.nimbus.cluster_state import ClusterState, FencedOut
from squall.nimbus.store import Store
from squall.records import Assignment, StormBase, decode
from squall.submit import submit_file
from squall.zk.layout import ZkLayout

from .conftest import TOPOLOGIES, squall

TINY = TOPOLOGIES / "tiny.py"


@pytest.fixture(scope="module")
def cluster(tmp_path_factory):
    conf = {
        "supervisor.worker.timeout.secs": 4,
        "supervisor.worker.start.timeout.secs": 15,
        "nimbus.task.timeout.secs": 60,
    }
    with LocalCluster(tmp_path_factory.mktemp("chaos"), supervisors=2, nimbuses=2, conf=conf) as c:
        yield c


def leader_name(cluster):
    _, port = cluster.leader()
    return cluster.nimbus_name(cluster.nimbus_ports.index(port) + 1)


def tid_of(client, name):
    return {t.name: t.id for t in client.getClusterInfo().topologies}[name]


def placement(zk, tid):
    return decode(Assignment, zk.get(f"/squall/assignments/{tid}")[0], tid)


def all_running(client, name):
    info = client.getTopologyInfo(name)
    return all(e.stats is not None for e in info.executors)


def test_a_deposed_leaders_writes_are_fenced(cluster):
    clients = [KazooClient(hosts=cluster.zookeeper.hosts) for _ in range(2)]
    for c in clients:
        c.start()
    try:
        old, new = (ClusterState(c, ZkLayout("/fencing-test")) for c in clients)
        old.ensure_layout()
        old.take_lead()
        new.take_lead()
        assert new.epoch == old.epoch + 1
        base = StormBase("x", "active", 0, 1, {})
        with pytest.raises(FencedOut):
            old.write_base("x-1-1", base)
        with pytest.raises(FencedOut):  # what guards the deposed leader's store writes
            old.check_lead()
        new.check_lead()
    finally:
        for c in clients:
            c.stop()
            c.close()


def test_standby_answers_reads_and_names_the_leader(cluster):
    leader_host, leader_port = cluster.leader()
    standby = next(p for p in cluster.nimbus_ports if p != leader_port)
    from squall.client import nimbus_client

    with nimbus_client("127.0.0.1", standby, conf=cluster.client_conf()) as client:
        assert client.getLeader().port == leader_port
        info = client.getClusterInfo()
        assert len(info.supervisors) == 2
        assert sorted(n.isLeader for n in info.nimbuses) == [False, True]
        with pytest.raises(TApplicationException, match=f"{leader_host}:{leader_port}"):
            client.beginFileUpload()


def submit_ha(cluster, zk):
    """Submit "ha", then change it with `squall config set` (a marker, and 3 workers)."""
    with cluster.client() as client:
        submit_file(client, TINY, cluster.client_conf(), name="ha")
        tid = tid_of(client, "ha")
        wait_for(lambda: all_running(client, "ha"), 60, "ha running")
    marker = squall(cluster, "config", "set", "ha", "ha.marker", "after-submit")
    assert marker.returncode == 0, marker.stderr
    result = squall(cluster, "config", "set", "ha", "topology.workers", "3")
    assert result.returncode == 0, result.stderr
    wait_for(lambda: len(placement(zk, tid).slots()) == 3, 60, "a rebalance to 3 workers")
    return tid


@pytest.fixture
def ha(cluster, zk):
    """The topology "ha" as submit_ha leaves it, running: submitted here unless an earlier
    test of the module left it alive, so every test can run alone."""
    with cluster.client() as client:
        alive = "ha" in {t.name for t in client.getClusterInfo().topologies}
    tid = tid_of_ha(cluster) if alive else submit_ha(cluster, zk)
    with cluster.client() as client:
        wait_for(lambda: all_running(client, "ha"), 90, "ha running")
    return tid


def tid_of_ha(cluster):
    with cluster.client() as client:
        return tid_of(client, "ha")


def test_config_set_is_logged_and_takes_effect(cluster, zk):
    with cluster.client() as client:
        if "ha" in {t.name for t in client.getClusterInfo().topologies}:
            client.killTopologyWithOpts("ha", T.KillOptions(wait_secs=0))
            wait_for(lambda: client.isTopologyNameAllowed("ha"), 60, "an earlier ha removed")
    tid = submit_ha(cluster, zk)
    with cluster.client() as client:
        assert json.loads(client.getTopologyConf("ha"))["topology.workers"] == 3
        wait_for(lambda: all_running(client, "ha"), 60, "ha running on 3 workers")
    for key, value in [
        ("topology.workers", '"three"'),
        ("topology.workers", "0"),
        ("nimbus.thrift.port", "1"),
        ("topology.wokers", "2"),
    ]:
        bad = squall(cluster, "config", "set", "ha", key, value)
        assert bad.returncode == 1 and key in bad.stderr, (key, bad.stderr)
    store = Store(cluster.base_conf()["nimbus.store.url"], source="test")
    [message] = [
        m
        for m in store.log()
        if m.type == "set-config" and m.key == "topology.workers" and m.values["topology"] == tid
    ]
    assert (message.version, message.key) == ("1", "topology.workers")
    epoch = int(zk.get("/squall/nimbus/epoch")[0])
    assert message.values == {"topology": tid, "value": 3, "epoch": epoch}
    assert {"submit", "rebalance", "assignment"} <= {m.type for m in store.log()}
    store.close()


def test_leader_killed_standby_leads_without_moving_tasks(cluster, zk, ha):
    tid = ha
    before = placement(zk, tid)
    epoch = int(zk.get("/squall/nimbus/epoch")[0])
    old = leader_name(cluster)
    cluster.processes[old].kill()  # SIGKILL
    cluster.processes[old].wait()
    try:
        wait_for(lambda: leader_name(cluster) != old, 60, "the standby to take the lead")
        # the election names the new leader a moment before it has taken the epoch
        wait_for(lambda: int(zk.get("/squall/nimbus/epoch")[0]) == epoch + 1, 30, "the new epoch")
        check_no_moves_and_conf(cluster, zk, tid, before)
    finally:
        restart_as_standby(cluster, old)


def check_no_moves_and_conf(cluster, zk, tid, before):
    beats = f"/squall/taskbeats/{tid}"
    seqs = {c: json.loads(zk.get(f"{beats}/{c}")[0])["seq"] for c in zk.get_children(beats)}
    wait_for(
        lambda: all(json.loads(zk.get(f"{beats}/{c}")[0])["seq"] >= s + 6 for c, s in seqs.items()),
        60,
        "several monitor rounds under the new leader",
    )
    assert placement(zk, tid).task_slots == before.task_slots  # zero moves
    with cluster.client() as client:  # the new leader rebuilt the conf from the log
        assert json.loads(client.getTopologyConf("ha"))["topology.workers"] == 3


def restart_as_standby(cluster, name):
    cluster.processes.pop(name, None)
    cluster.start_nimbus([cluster.nimbus_name(n) for n in (1, 2)].index(name) + 1)


def test_frozen_old_leader_resumed_cannot_overwrite(cluster, zk, ha):
    wait_for(lambda: len(zk.get_children("/squall/nimbuses")) == 2, 60, "both nimbuses up")
    tid = ha
    frozen = leader_name(cluster)
    process = cluster.processes[frozen]
    os.kill(process.pid, signal.SIGSTOP)
    try:
        wait_for(lambda: leader_name(cluster) != frozen, 60, "a new leader while frozen")
        with cluster.client() as client:  # the new leader changes the assignment
            client.rebalance("ha", T.RebalanceOptions(wait_secs=0, num_workers=2))
        wait_for(lambda: len(placement(zk, tid).slots()) == 2, 60, "the new assignment")
        after = placement(zk, tid)
    finally:
        os.kill(process.pid, signal.SIGCONT)
    # the old leader finds its session gone, steps down and exits: it never writes again
    assert process.wait(60) == 3
    assert placement(zk, tid) == after
    restart_as_standby(cluster, frozen)


def test_hung_worker_is_restarted(cluster, zk, ha):
    tid = ha
    pid_file = next(cluster.directory.glob(f"supervisor*/supervisor/workers/{tid}-*.pid"))
    pid = int(pid_file.read_text())
    os.kill(pid, signal.SIGSTOP)
    try:
        wait_for(
            lambda: pid_file.exists() and int(pid_file.read_text()) != pid,
            60,
            "the supervisor to replace the hung worker",
        )
    finally:
        with contextlib.suppress(ProcessLookupError):
            os.kill(pid, signal.SIGCONT)
    with cluster.client() as client:
        wait_for(lambda: all_running(client, "ha"), 60, "ha running again")
    # the restarted worker got the conf as changed by `squall config set` after submit
    port = pid_file.stem.rpartition("-")[2]
    worker_conf = json.loads(
        (pid_file.parents[1] / "stormdist" / tid / f"worker-{port}.json").read_text()
    )
    assert worker_conf["ha.marker"] == "after-submit"


def _alive(pid: int) -> bool:
    """Running, and not a zombie waiting for whoever adopted it to reap it."""
    try:
        state = Path(f"/proc/{pid}/stat").read_text().rpartition(")")[2].split()[0]
    except (OSError, IndexError):
        return False
    return state != "Z"


def test_killed_supervisor_tasks_run_elsewhere(cluster, zk, ha):
    tid = ha
    pid_files = cluster.directory.glob("supervisor2/supervisor/workers/*.pid")
    orphans = [int(p.read_text()) for p in pid_files]
    assert orphans  # three workers on two supervisors
    cluster.processes["supervisor2"].kill()  # SIGKILL: its workers are orphaned
    cluster.processes.pop("supervisor2").wait()
    # ... and end themselves: an orphan would hold its ZooKeeper session, nobody reading its log
    wait_for(lambda: not any(_alive(p) for p in orphans), 30, f"orphaned workers {orphans} to end")

    def only_on_supervisor1():
        return {s[0] for s in placement(zk, tid).slots()} == {"supervisor1"}

    wait_for(only_on_supervisor1, 60, "tasks to leave the dead supervisor")
    with cluster.client() as client:
        wait_for(lambda: all_running(client, "ha"), 90, "every task running on supervisor1")
    cluster.start_supervisor(2)
    wait_for(
        lambda: "supervisor2" in {s[0] for s in placement(zk, tid).slots()},
        60,
        "the returning supervisor to get work",
    )


def test_zookeeper_restart_and_the_cluster_recovers(cluster, zk, ha):
    cluster.zookeeper.restart()
    wait_for(lambda: len(zk.get_children("/squall/supervisors")) == 2, 60, "supervisors back")

    def on_leader(call):  # a fresh client per try: a leader whose session expired steps
        with cluster.client() as client:  # down (exit 3) and drops its connections, maybe
            return call(client)  # after the supervisors are back; wait_for tries again

    def submitted(client):
        if "after-zk" not in {t.name for t in client.getClusterInfo().topologies or ()}:
            submit_file(client, TINY, cluster.client_conf(), name="after-zk")
        return True

    def killed(client):
        for t in client.getClusterInfo().topologies or ():
            client.killTopologyWithOpts(t.name, T.KillOptions(wait_secs=0))
        return not client.getClusterInfo().topologies

    wait_for(lambda: on_leader(submitted), 120, "a topology submitted to a leader")
    wait_for(lambda: on_leader(lambda c: all_running(c, "after-zk")), 90, "the new one running")
    wait_for(lambda: on_leader(lambda c: all_running(c, "ha")), 90, "the old topology running")
    wait_for(lambda: on_leader(killed), 90, "topologies removed")
    # removal reached ZooKeeper and the store, not only the summary
    assert zk.get_children("/squall/storms") == zk.get_children("/squall/assignments") == []
    store = Store(cluster.base_conf()["nimbus.store.url"], source="test")
    assert store.topology_ids() == set()
    store.close()
