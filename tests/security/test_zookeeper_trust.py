"""Probes of ZooKeeper trust (#11 item 2), as an attacker on the network with a plain kazoo
client would try them against a live local cluster: a forged assignment of a higher epoch,
and junk nodes under every path nimbus, supervisors and workers read.

Before: one write of an assignment with epoch 1,000,000 moved a worker and supervisors then
ignored nimbus's real assignments until restarted; one node /squall/nimbuses/x = [] broke
getClusterInfo and getLeader for everyone."""

from __future__ import annotations

import json
import os
import signal
from dataclasses import dataclass, replace
from pathlib import Path

import pytest

from squall import thrift_api as T
from squall.local import LocalCluster, wait_for
from squall.records import (
    Assignment,
    ErrorReport,
    NimbusInfo,
    RecordError,
    StormBase,
    SupervisorInfo,
    WorkerBeat,
    decode,
    encode,
    trusted_epoch,
    type_problem,
)
from squall.submit import submit_file

from ..integration import conftest as integration

zk = integration.zk  # the integration tests' ZooKeeper client fixture, on this module's cluster

TINY = Path(__file__).parents[1] / "integration" / "topologies" / "tiny.py"
ROOT = "/squall"

# --- decoding: a malformed record is a RecordError, never another exception ---


def raw(**fields):
    return json.dumps(fields).encode()


BASE = {
    "name": "t",
    "status": "active",
    "launch_time_secs": 1,
    "num_workers": 1,
    "component_executors": {"a": 1},
}
ASSIGNMENT = {
    "epoch": 1,
    "code_dir": "t",
    "node_host": {"s": "h"},
    "task_slots": {"1": ["s", 6700]},
    "task_start_secs": {"1": 1},
}

MALFORMED = [
    (NimbusInfo, b"[]"),
    (NimbusInfo, raw(host=5, port=6627, start=0)),
    (NimbusInfo, raw(host="h", port="6627", start=0)),
    (NimbusInfo, raw(host="h", port=True, start=0)),
    (NimbusInfo, b"[" * 100_000),
    (NimbusInfo, b"\xff\xfe"),
    (StormBase, raw(**{**BASE, "name": 5})),
    (StormBase, raw(**{**BASE, "status": []})),
    (StormBase, raw(**{**BASE, "launch_time_secs": "x"})),
    (StormBase, raw(**{**BASE, "component_executors": []})),
    (StormBase, raw(**{**BASE, "pending": "x"})),
    (StormBase, raw(**{**BASE, "pending": {"event": 1, "due_secs": 1}})),
    (StormBase, raw(**{**BASE, "previous_status": 3})),
    # well typed, but values nimbus's state machine does not know (a transition would fail)
    (StormBase, raw(**{**BASE, "status": "running"})),
    (StormBase, raw(**{**BASE, "previous_status": "paused"})),
    (StormBase, raw(**{**BASE, "previous_status": ""})),
    (StormBase, raw(**{**BASE, "pending": {"event": "explode", "due_secs": 1.0}})),
    (StormBase, raw(**{**BASE, "pending": ["remove", 1.0]})),
    (Assignment, raw(**{**ASSIGNMENT, "task_slots": {"1": []}})),
    (Assignment, raw(**{**ASSIGNMENT, "task_slots": {"1": "s"}})),
    (Assignment, raw(**{**ASSIGNMENT, "task_slots": {"x": ["s", 1]}})),
    (Assignment, raw(**{**ASSIGNMENT, "epoch": "x"})),
    (Assignment, raw(**{**ASSIGNMENT, "node_host": []})),
    (SupervisorInfo, raw(host="h", ports="abc", start_time_secs=1)),
    (SupervisorInfo, raw(host="h", ports=[1], start_time_secs=1, version=3)),
    (SupervisorInfo, raw(host=None, ports=[1], start_time_secs=1)),
    (WorkerBeat, raw(seq=1, time_secs=1, uptime_secs=1, tasks=[])),
    (WorkerBeat, raw(seq=1, time_secs=1, uptime_secs=1, tasks={"1": 5})),
]


@pytest.mark.parametrize(("cls", "data"), MALFORMED)
def test_a_malformed_record_is_a_record_error(cls, data):
    with pytest.raises(RecordError, match="/x"):
        decode(cls, data, "/x")


def test_well_formed_records_still_decode():
    assert decode(StormBase, raw(**BASE), "/x").component_executors == {"a": 1}
    assert decode(Assignment, raw(**ASSIGNMENT), "/x").task_slots == {1: ("s", 6700)}
    stats = {"emitted": {"default": 1}, "anything": [None]}
    beat = decode(WorkerBeat, raw(seq=1, time_secs=1, uptime_secs=1, tasks={"1": stats}), "/x")
    assert beat.tasks == {1: stats}
    nimbus = decode(NimbusInfo, raw(host="h", port=1, start=1.5, version="v"), "/x")
    assert nimbus == NimbusInfo("h", 1, 1.5, "v")
    pending = {**BASE, "pending": {"event": "remove", "due_secs": 3}}
    assert decode(StormBase, raw(**pending), "/x").pending.due_secs == 3
    rebalancing = {**BASE, "status": "rebalancing", "previous_status": "inactive"}
    rebalancing["pending"] = {"event": "do-rebalance", "due_secs": 5.0}
    assert decode(StormBase, raw(**rebalancing), "/x").pending.event == "do-rebalance"


def test_junk_stats_in_a_heartbeat_are_left_out_of_topology_info():
    from squall.nimbus.reads.summaries import topology_info

    base = decode(StormBase, raw(**BASE), "/x")
    placed = decode(Assignment, raw(**ASSIGNMENT), "/x")
    stats = {"emitted": {"default": 3, "bad": "x", "flag": True, "huge": 2**70}, "transferred": [1]}
    stats["windows"] = {"600": "x", "10800": {"emitted": {"d": -1}, "execute_ms": "x"}, "7": {}}
    beat = WorkerBeat(seq=1, time_secs=1, uptime_secs=2, tasks={1: stats})
    info = topology_info("t", base, placed, {1: "a"}, {("s", 6700): beat}, {}, now=5)
    (executor,) = info.executors
    assert executor.stats.emitted == {
        ":all-time": {"default": 3},
        "600": {},
        "10800": {},
        "86400": {},
    }
    assert executor.stats.transferred[":all-time"] == {}
    assert executor.stats.specific.bolt.execute_ms_avg == {w: {} for w in executor.stats.emitted}


def test_junk_in_the_epoch_node_counts_from_zero_for_a_new_leader():
    from squall.nimbus.cluster_state import _epoch_of

    assert _epoch_of(b"41") == 41 and _epoch_of(b"") == 0 and _epoch_of(None) == 0
    for junk in (b"x", b"-3", b"1e6", b"\xff", b"9" * 19, "²".encode()):
        assert _epoch_of(junk) == 0


def test_the_epoch_read_by_supervisors_and_workers(zk):
    from squall.zk.connection import read_epoch
    from squall.zk.layout import ZkLayout

    lay = ZkLayout("/epoch-probe")
    try:
        assert read_epoch(zk, lay) is None  # no node yet
        zk.create(lay.nimbus_epoch, b"7", makepath=True)
        assert read_epoch(zk, lay) == 7
        for junk in (b"x", b"-1", b"[]", b"\xff", b"9" * 19):
            zk.set(lay.nimbus_epoch, junk)
            assert read_epoch(zk, lay) is None
    finally:
        zk.delete("/epoch-probe", recursive=True)


@dataclass(frozen=True)
class Probe:
    m: dict[str, int]
    seq: list[int]
    pair: tuple[str, int]
    maybe: int | None = None


@pytest.mark.parametrize(
    ("changes", "problem"),
    [
        ({"m": []}, "m: [] is not a map"),
        ({"m": {1: 1}}, "m: 1 is not str"),
        ({"m": {"a": "x"}}, "m: 'x' is not int"),
        ({"m": {"a": 1, "b": "x"}}, "m: 'x' is not int"),
        ({"seq": (1,)}, "seq: (1,) is not a list"),
        ({"seq": [1, "x"]}, "seq: 'x' is not int"),
        ({"pair": ["s", 1]}, "pair: ['s', 1] is not a tuple"),
        ({"pair": ("s",)}, "pair: ('s',) has 1 items, not 2"),
        ({"pair": ("s", "x")}, "pair: 'x' is not int"),
        ({"maybe": "x"}, "maybe: 'x' is none of"),
        ({"maybe": True}, "maybe: True is none of"),
    ],
)
def test_type_problem_names_the_field_and_the_value(changes, problem):
    good = Probe({"a": 1}, [1, 2], ("s", 1))
    assert type_problem(good) is None and type_problem(replace(good, maybe=3)) is None
    assert type_problem(replace(good, **changes)).startswith(problem)


def test_encode_round_trips_with_sorted_keys_and_a_missing_field_is_named():
    placed = decode(Assignment, raw(**ASSIGNMENT), "/x")
    assert encode(placed).startswith(b'{"code_dir":"t","epoch":1,')
    assert decode(Assignment, encode(placed), "/x") == placed
    with pytest.raises(RecordError, match="/x: StormBase record lacks launch_time_secs, name"):
        decode(
            StormBase,
            raw(**{k: v for k, v in BASE.items() if k not in ("name", "launch_time_secs")}),
            "/x",
        )
    assert decode(ErrorReport, raw(error="e", time_secs=1), "/x") == ErrorReport("e", 1)


def test_trusted_epoch_bounds():
    assert trusted_epoch(0, 0) and trusted_epoch(3, 3) and trusted_epoch(1, 3)
    assert not trusted_epoch(4, 3) and not trusted_epoch(-1, 3)


# --- probes on a live cluster ---


@pytest.fixture(scope="module")
def cluster(tmp_path_factory):
    with LocalCluster(tmp_path_factory.mktemp("zktrust"), supervisors=2) as c:
        yield c


@pytest.fixture(scope="module")
def tid(cluster):
    with cluster.client() as client:
        submit_file(client, TINY, cluster.client_conf(), name="trust")
        tid = {t.name: t.id for t in client.getClusterInfo().topologies}["trust"]
        wait_for(lambda: running(client), 90, "every task of trust running")
    return tid


def running(client) -> bool:
    return all(e.stats is not None for e in client.getTopologyInfo("trust").executors)


def assignment(zk, tid) -> Assignment:
    return decode(Assignment, zk.get(f"{ROOT}/assignments/{tid}")[0], tid)


def worker_pids(cluster, tid) -> dict[str, int]:
    """{supervisor/port: pid} of the topology's workers, from the supervisors' pid files."""
    return {
        f"{p.parents[2].name}/{p.stem}": int(p.read_text())
        for p in cluster.directory.glob(f"supervisor*/supervisor/workers/{tid}-*.pid")
    }


def beat_seqs(zk, tid) -> dict[str, int]:
    parent = f"{ROOT}/taskbeats/{tid}"
    return {c: json.loads(zk.get(f"{parent}/{c}")[0])["seq"] for c in zk.get_children(parent)}


def beats_advanced(zk, tid, before: dict[str, int], by: int) -> bool:
    now = beat_seqs(zk, tid)
    return all(now.get(c, -1) >= s + by for c, s in before.items())


def supervisor_logs(cluster) -> str:
    return "".join(p.read_text() for p in cluster.directory.glob("supervisor*.log"))


def test_a_forged_higher_epoch_assignment_is_ignored(cluster, zk, tid):
    real = assignment(zk, tid)
    pids = worker_pids(cluster, tid)
    assert pids
    info = decode(SupervisorInfo, zk.get(f"{ROOT}/supervisors/supervisor1")[0], "s1")
    used = {port for _, port in real.slots()}
    spare = next(p for p in info.ports if p not in used)
    forged = replace(
        real,
        epoch=1_000_000,
        node_host={"supervisor1": "127.0.0.1"},
        task_slots={t: ("supervisor1", spare) for t in real.task_slots},
    )
    seqs = beat_seqs(zk, tid)
    zk.set(f"{ROOT}/assignments/{tid}", encode(forged))
    # several supervisor syncs (every second) and worker beats later, nothing moved and
    # every worker lives
    wait_for(lambda: beats_advanced(zk, tid, seqs, 4), 60, "the workers to keep beating")
    assert worker_pids(cluster, tid) == pids
    assert f"ignoring the assignment of {tid}" in supervisor_logs(cluster)
    assert not list(cluster.directory.glob(f"supervisor1/supervisor/workers/{tid}-{spare}.pid"))
    for pid in pids.values():
        os.kill(pid, 0)  # still alive
    with cluster.client() as client:
        assert running(client)
        # nimbus's next real assignment applies (the forged epoch set no high-water mark)
        client.rebalance("trust", T.RebalanceOptions(wait_secs=0, num_workers=3))
        wait_for(
            lambda: (
                len(assignment(zk, tid).slots()) == 3
                and assignment(zk, tid).epoch == int(zk.get(f"{ROOT}/nimbus/epoch")[0])
            ),
            60,
            "nimbus's rebalanced assignment",
        )
        after = assignment(zk, tid)
        wait_for(
            lambda: (
                {k.rpartition("-")[2] for k in worker_pids(cluster, tid)}
                == {str(port) for _, port in after.slots()}
            ),
            60,
            "the supervisors to run the rebalanced assignment",
        )
        wait_for(lambda: running(client), 90, "trust running on its new placement")


JUNK = {
    f"{ROOT}/nimbuses/x": b"[]",
    f"{ROOT}/nimbuses/y": raw(host=5, port="a", start=0),
    f"{ROOT}/nimbuses/deep": b"[" * 200_000,
    f"{ROOT}/supervisors/junk": b"\xff\x00",
    f"{ROOT}/supervisors/junk2": raw(host="h", ports="abc", start_time_secs=1),
    f"{ROOT}/supervisors/junk3": raw(host="h", ports=[1], start_time_secs="x"),
    f"{ROOT}/assignments/junk-1-1": raw(epoch="x"),
    f"{ROOT}/assignments/junk-2-2": raw(**{**ASSIGNMENT, "task_slots": {"1": []}}),
    f"{ROOT}/storms/junk-1-1": b"[]",
    f"{ROOT}/storms/junk-2-2": raw(**{**BASE, "name": 5}),
}


def junk_under(tid: str) -> dict[str, bytes]:
    return {
        f"{ROOT}/taskbeats/{tid}/junk-1": b"{}",
        f"{ROOT}/taskbeats/{tid}/junk-6700": raw(
            seq=1, time_secs=1, uptime_secs=1, tasks={"1": {"emitted": [1], "transferred": 5}}
        ),
        f"{ROOT}/errors/{tid}/junk": raw(x=1),
        f"{ROOT}/errors/{tid}/junk2": json.dumps(
            [{"error": 5}, {"error": "e", "time_secs": "x"}, 7, {"error": "e", "time_secs": 1}]
        ).encode(),
        f"{ROOT}/tasks/{tid}/junk": b"sink",
        f"{ROOT}/tasks/{tid}/999": b"\xff",
    }


def ghost_assignment(zk, tid) -> bytes:
    """A well-formed assignment of the current epoch for a topology nimbus never had, on a
    port of supervisor1 the real topology does not use: its worker can never start."""
    info = decode(SupervisorInfo, zk.get(f"{ROOT}/supervisors/supervisor1")[0], "s1")
    used = {port for _, port in assignment(zk, tid).slots()}
    spare = max(p for p in info.ports if p not in used)
    epoch = int(zk.get(f"{ROOT}/nimbus/epoch")[0])
    return encode(Assignment(epoch, "ghost", {}, {1: ("supervisor1", spare)}, {1: 0}))


def test_junk_nodes_leave_every_read_working(cluster, zk, tid):
    nodes = {**JUNK, **junk_under(tid), f"{ROOT}/assignments/ghost-3-3": ghost_assignment(zk, tid)}
    for path, data in nodes.items():
        zk.create(path, data, makepath=True)
    try:
        check_reads(cluster, tid)
        # a worker restarting reads /tasks with the junk in it
        pids = worker_pids(cluster, tid)
        victim = sorted(pids)[0]
        os.kill(pids[victim], signal.SIGKILL)
        wait_for(
            lambda: worker_pids(cluster, tid).get(victim, pids[victim]) != pids[victim],
            60,
            "the killed worker to be restarted",
        )
        with cluster.client() as client:
            wait_for(lambda: running(client), 90, "trust running again")
        # a nimbus starting (BecameLeader reads everything) with the junk in place
        cluster.restart_nimbus(1)
        check_reads(cluster, tid)
    finally:
        for path in nodes:
            if zk.exists(path):
                zk.delete(path)


def check_reads(cluster, tid):
    with cluster.client() as client:
        summary = client.getClusterInfo()
        assert {s.supervisor_id for s in summary.supervisors} == {"supervisor1", "supervisor2"}
        assert [t.id for t in summary.topologies] == [tid]
        assert [(n.port, n.isLeader) for n in summary.nimbuses] == [(cluster.nimbus_port, True)]
        assert client.getLeader().port == cluster.nimbus_port
        info = client.getTopologyInfo("trust")
        assert [(e.error, e.error_time_secs) for e in info.errors["junk2"]] == [("e", 1)]
        assert "junk" not in info.errors
        wait_for(lambda: running(client), 60, "trust running with the junk in place")
    listed = integration.squall(cluster, "list")
    assert listed.returncode == 0, listed.stderr
    assert "trust" in listed.stdout


# --- one shared ZooKeeper identity (storm.zookeeper.auth.*), managed by the operator; the
# default per-role identities are tested in test_zookeeper_roles.py ---

AUTH = {
    "storm.zookeeper.auth.scheme": "digest",
    "storm.zookeeper.auth.payload": "squall:s3cret-7f3a",
}


def test_a_shared_identity_only_when_configured_and_digest_acls_then():
    from kazoo.security import make_digest_acl

    from squall.config import cluster_conf
    from squall.zk.connection import ZkAuthError, auth_settings

    assert auth_settings(cluster_conf()) == ([], None)
    conf = cluster_conf(**AUTH, **{"storm.zookeeper.superACL": "digest:admin:abc="})
    auth, acl = auth_settings(conf)
    assert auth == [("digest", "squall:s3cret-7f3a")]
    assert acl[0] == make_digest_acl("squall", "s3cret-7f3a", all=True)
    assert (acl[1].id.scheme, acl[1].id.id, acl[1].perms) == ("digest", "admin:abc=", 31)
    assert len(auth_settings(cluster_conf(**AUTH))[1]) == 1
    for bad in (
        {**AUTH, "storm.zookeeper.auth.scheme": "sasl"},
        {**AUTH, "storm.zookeeper.auth.payload": "no-colon"},
        {**AUTH, "storm.zookeeper.auth.payload": ":p"},
        {**AUTH, "storm.zookeeper.auth.payload": "u:"},
        {**AUTH, "storm.zookeeper.superACL": "digest"},
    ):
        with pytest.raises(ZkAuthError):
            auth_settings(cluster_conf(**bad))


def test_with_auth_on_an_anonymous_client_cannot_read_or_write_squall_nodes(tmp_path):
    from kazoo.client import KazooClient
    from kazoo.exceptions import NoAuthError

    with LocalCluster(tmp_path / "auth", supervisors=1, conf=AUTH) as cluster:
        with cluster.client() as client:
            submit_file(client, TINY, cluster.client_conf(), name="trust")
            tid = {t.name: t.id for t in client.getClusterInfo().topologies}["trust"]
            wait_for(lambda: running(client), 90, "trust running with ZooKeeper auth on")
        anonymous = KazooClient(hosts=cluster.zookeeper.hosts)
        anonymous.start()
        try:
            attempts = [
                lambda: anonymous.set(f"{ROOT}/assignments/{tid}", b"{}"),
                lambda: anonymous.create(f"{ROOT}/nimbuses/x", b"[]"),
                lambda: anonymous.create(f"{ROOT}/supervisors/fake", b"{}"),
                lambda: anonymous.delete(f"{ROOT}/storms/{tid}"),
                lambda: anonymous.set(f"{ROOT}/nimbus/epoch", b"1000000"),
                lambda: anonymous.get(f"{ROOT}/assignments/{tid}"),
                lambda: anonymous.get_children(f"{ROOT}/assignments"),
            ]
            for attempt in attempts:
                with pytest.raises(NoAuthError):
                    attempt()
        finally:
            anonymous.stop()
            anonymous.close()
        with cluster.client() as client:  # and the cluster itself still works
            assert [t.id for t in client.getClusterInfo().topologies] == [tid]
            assert running(client)
