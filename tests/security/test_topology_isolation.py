"""One user's topology against another's (issue 36 item 1), on a live secure cluster.

Before: the conf a topology's components were given held the supervisor role's ZooKeeper
login and its host's. With it an attacker's topology read every topology's CURVE keypair and
the victim's uploaded credentials, registered a fake supervisor, and, with the victim's CURVE
key, had the victim's bolt execute 10,000 forged tuples.

Now mallory's topology (tests/security/topologies/zk_attacker.py) finds no ZooKeeper login in
its conf, and its worker's own login (its topology's, read from the worker's conf file) is
refused everything of alice's topology and every registration; tuples forged with a guessed
key or with mallory's own topology key are executed 0 times by alice's bolt.
"""

import json
from pathlib import Path

import pytest
import zmq

from squall import thrift_api as T
from squall.local import LocalCluster, topology_id, wait_for, wait_until_quiet
from squall.records import Assignment
from squall.security.certificates import issue
from squall.security.topology_keys import decode_keys, new_keys
from squall.submit import submit_file
from squall.zk import connection as zk_mod
from squall.zk.identity import load_identity

from .test_worker_curve import (
    EMITTED,
    executed_after_fresh_beats,
    forged,
    handshake_event,
    push_socket,
)
from .topologies.zk_attacker import OFFSET

TINY = Path(__file__).parents[1] / "integration" / "topologies" / "tiny.py"
ATTACKER = Path(__file__).parent / "topologies" / "zk_attacker.py"
PROBES = (
    "read victim credentials",
    "read victim usercredentials",
    "list credentials",
    "create supervisor",
    "write victim beat",
    "create victim beat",
    "create victim error",
    "write victim assignment",
    "read victim consumer offsets",
    "write victim consumer offsets",
)


@pytest.fixture(scope="module")
def cluster(tmp_path_factory):
    conf = {"nimbus.users": ["alice", "mallory"]}
    with LocalCluster(tmp_path_factory.mktemp("isolation"), supervisors=1, conf=conf) as c:
        for name in ("alice", "mallory"):
            issue(c.base_conf_full(), name)
        yield c


def read_topology(conf, tid):
    """(keys, tasks by component, assignment, beat names) of `tid`, read as nimbus."""
    zk = zk_mod.connect(conf, "nimbus")
    try:
        lay = zk_mod.layout(conf)
        keys = decode_keys(zk.get(lay.credentials(tid))[0], lay.credentials(tid))
        tasks = {
            int(t): zk.get(lay.task(tid, t))[0].decode() for t in zk.get_children(lay.tasks(tid))
        }
        assignment = zk_mod.read_record(zk, Assignment, lay.assignment(tid))
        beats = sorted(zk.get_children(lay.taskbeats(tid)))
    finally:
        zk.stop()
        zk.close()
    return keys, tasks, assignment, beats


@pytest.fixture(scope="module")
def victim(cluster):
    """alice's tiny topology, run to the end, with credentials she uploaded."""
    conf = cluster.client_conf()
    with cluster.client("alice") as client:
        name = submit_file(client, TINY, conf, name="victim")
        tid = topology_id(client, name)
        client.uploadNewCredentials(name, T.Credentials(creds={"token": "alices-secret"}))
    done = wait_until_quiet(conf, tid, 120)
    assert done["executed"] == EMITTED and done["errors"] == 0
    # a consumer group of alice's, made as her topology's worker makes one
    supervisor = load_identity(conf, "supervisor")
    worker_conf = {**conf, **supervisor.worker_conf(tid, "alice")}
    zk = zk_mod.connect(worker_conf, zk_mod.WORKER, tid)
    try:
        zk.create(f"/squall/{OFFSET}", b"7", makepath=True)
    finally:
        zk.stop()
        zk.close()
    return tid


@pytest.fixture(scope="module")
def attack(cluster, victim, tmp_path_factory):
    """mallory's attacker topology, run until its bolt wrote its report."""
    conf = cluster.client_conf()
    report = tmp_path_factory.mktemp("attack") / "report.json"
    report.parent.chmod(0o777)
    *_, beats = read_topology(conf, victim)
    overrides = {
        "attack.victim": victim,
        "attack.victim.beat": beats[0],
        "attack.report": str(report),
    }
    with cluster.client("mallory") as client:
        name = submit_file(client, ATTACKER, conf, name="attacker", overrides=overrides)
        tid = topology_id(client, name)
    wait_for(report.exists, 120, "the attacker's report")
    wait_for(lambda: json.loads(report.read_text() or "{}"), 10, "the whole report")
    yield tid, json.loads(report.read_text())
    with cluster.client("mallory") as client:
        client.killTopology(name)


def test_the_conf_a_component_gets_holds_no_zookeeper_login(attack):
    _, report = attack
    assert report["zookeeper logins in the conf"] == []


def test_the_attackers_worker_login_is_its_own_topologys_only(attack):
    tid, report = attack
    assert report["worker logins"] == [f"topology-{tid}", "user-mallory", "workers"]
    for given in ("with the conf", "with the worker's logins"):
        outcomes = report[given]
        assert {p: outcomes[p] for p in PROBES} == dict.fromkeys(PROBES, "refused"), given
    # the control: its own keys are readable with its own login (not without one)
    assert report["with the worker's logins"]["read own credentials"] == "done"
    assert report["with the conf"]["read own credentials"] == "refused"


def test_the_victims_nodes_are_untouched(cluster, victim, attack):
    conf = cluster.client_conf()
    zk = zk_mod.connect(conf, "nimbus")
    try:
        lay = zk_mod.layout(conf)
        assert "fake" not in zk.get_children(lay.supervisors)
        assert "forged" not in zk.get_children(lay.errors(victim))
        assert not [b for b in zk.get_children(lay.taskbeats(victim)) if b.startswith("fake")]
        assert zk.get(f"/squall/{OFFSET}")[0] == b"7"
    finally:
        zk.stop()
        zk.close()


def test_tuples_forged_with_a_guessed_or_another_topologys_key_are_executed_0_times(
    cluster, victim, attack
):
    conf = cluster.client_conf()
    keys, tasks, assignment, _ = read_topology(conf, victim)
    mallorys, *_ = read_topology(conf, attack[0])
    sink = min(t for t, c in tasks.items() if c == "sink")
    spout = min(t for t, c in tasks.items() if c == "numbers")
    port = assignment.task_slots[sink][1]
    ctx = zmq.Context()
    try:
        tuple_ = forged(sink, spout)
        for key in (new_keys(), mallorys):  # guessed; the attacker topology's own
            for server in (keys.public, key.public):  # the victim's public key is no secret
                sock = push_socket(ctx, key, server=server)
                assert handshake_event(sock, port, tuple_) != zmq.EVENT_HANDSHAKE_SUCCEEDED
                sock.close(linger=0)
        assert executed_after_fresh_beats(conf, victim) == EMITTED  # 0 forged ones executed
    finally:
        ctx.destroy(linger=0)
