"""What a lost host costs nimbus in I/O, against a real ZooKeeper and SQLite: a supervisor
change reads only the supervisors nimbus does not know; a round that moves many topologies
writes their assignments pipelined, each still its own epoch-fenced transaction (new and
existing ones written, a deposed leader's refused), and its coordinator-log messages in one
database commit, in order."""

from __future__ import annotations

import pytest
from kazoo.client import KazooClient

from squall.nimbus.cluster_state import ClusterState, FencedOut
from squall.nimbus.store import Store
from squall.records import Assignment, SupervisorInfo, decode, encode
from squall.zk.layout import ZkLayout

LAYOUT = ZkLayout("/batched")


@pytest.fixture
def zk(zk_server):
    client = KazooClient(hosts=zk_server.hosts)
    try:
        client.start()
        yield client
    finally:
        client.delete(LAYOUT.root, recursive=True)
        client.stop()
        client.close()


def assignment(tid: str, port: int) -> Assignment:
    return Assignment(1, tid, {"s1": "h1"}, {1: ("s1", port), 2: ("s1", port)}, {1: 0, 2: 0})


def leader(zk: KazooClient) -> ClusterState:
    state = ClusterState(zk, LAYOUT)
    state.ensure_layout()
    state.take_lead()
    return state


def test_new_and_existing_assignments_are_written_together(zk):
    state = leader(zk)
    state.write_assignment("t0", assignment("t0", 6700))
    writes = [(f"t{i}", assignment(f"t{i}", 6701 + i)) for i in range(40)]
    state.write_assignments(writes)
    for tid, written in writes:
        data, _ = zk.get(LAYOUT.assignment(tid))
        assert decode(Assignment, data, tid) == written


def test_more_than_one_request_holds_is_split_into_several_transactions(zk):
    state = leader(zk)
    sid = "supervisor-with-a-long-id"
    big = {t: (sid, 6700 + t % 4) for t in range(1, 2001)}
    starts = dict.fromkeys(big, 0)
    writes = [(f"t{i}", Assignment(1, f"t{i}", {sid: "h"}, big, starts)) for i in range(12)]
    assert sum(len(encode(a)) for _, a in writes) > 1024 * 1024  # more than jute.maxbuffer
    state.write_assignments(writes)
    for tid, written in writes:
        assert decode(Assignment, zk.get(LAYOUT.assignment(tid))[0], tid) == written


def test_a_deposed_leader_writes_no_assignment(zk):
    old = leader(zk)
    old.write_assignment("t0", assignment("t0", 6700))
    leader(zk)  # another nimbus takes the epoch
    with pytest.raises(FencedOut):
        old.write_assignments([("t0", assignment("t0", 6799)), ("t1", assignment("t1", 6799))])
    data, _ = zk.get(LAYOUT.assignment("t0"))
    assert decode(Assignment, data, "t0") == assignment("t0", 6700)
    assert zk.exists(LAYOUT.assignment("t1")) is None


def test_log_messages_are_appended_in_order_in_one_commit(tmp_path):
    store = Store(f"sqlite:///{tmp_path / 'store.db'}", source="nimbus-a:6627")
    store.append("submit", "wc", {"topology": "t0"})
    seqs = store.append_all([("assignment", f"t{i}", {"topology": f"t{i}"}) for i in range(5)])
    assert seqs == sorted(seqs) and len(set(seqs)) == 5
    assert [m.key for m in store.log()] == ["wc", "t0", "t1", "t2", "t3", "t4"]
    with pytest.raises(ValueError):  # a bad type refuses the whole batch: nothing appended
        store.append_all([("assignment", "t5", {}), ("nonsense", "x", {})])
    assert len(list(store.log())) == 6
    store.close()


def test_a_supervisor_change_reads_only_the_new_supervisors(zk):
    state = leader(zk)
    for sid, port in (("s1", 6700), ("s2", 6700)):
        zk.create(LAYOUT.supervisor(sid), encode(SupervisorInfo("h", [port], 0)))
    known = state.read_supervisors()
    assert sorted(known) == ["s1", "s2"]
    zk.delete(LAYOUT.supervisor("s1"))
    zk.create(LAYOUT.supervisor("s3"), encode(SupervisorInfo("h3", [6701], 0)))
    zk.set(LAYOUT.supervisor("s2"), encode(SupervisorInfo("h", [6799], 0)))  # in place
    changed = state.read_supervisors(known)
    assert changed == {"s2": known["s2"], "s3": SupervisorInfo("h3", [6701], 0)}
    assert state.read_supervisors()["s2"].ports == [6799]  # the monitor round reads it all
