"""A supervisor re-reads only the assignments whose watch fired (supervisor/assignment_watch.py),
against a real ZooKeeper: a change to one assignment costs one read, not one per topology,
and the periodic full re-read still reads them all."""

from __future__ import annotations

import threading

import pytest
from kazoo.client import KazooClient

from squall.local import wait_for
from squall.records import Assignment, encode
from squall.supervisor.assignment_watch import AssignmentWatch
from squall.zk.layout import ZkLayout
from squall.zk.server import ZooKeeperServer

LAYOUT = ZkLayout("/watchtest")


@pytest.fixture(scope="module")
def zk(tmp_path_factory):
    server = ZooKeeperServer(tmp_path_factory.mktemp("zk")).start()
    client = KazooClient(hosts=server.hosts)
    try:
        client.start()
        yield client
    finally:
        client.stop()
        client.close()
        server.stop()


def assignment(tid: str, port: int) -> bytes:
    return encode(Assignment(1, tid, {"s1": "h"}, {1: ("s1", port)}, {1: 0}))


def test_only_changed_assignments_are_read(zk):
    for i in range(5):
        zk.create(LAYOUT.assignment(f"t{i}"), assignment(f"t{i}", 6700), makepath=True)
    wake = threading.Event()
    watch = AssignmentWatch(zk, LAYOUT, full_every=30, wake=wake)
    watch.start()
    assert watch.refresh(0.0)  # the first refresh reads everything
    assert sorted(watch.assignments) == [f"t{i}" for i in range(5)]
    assert watch.watched == set(watch.assignments)  # each one watched
    reads = watch.reads
    assert reads == 5

    assert not watch.refresh(2.0)  # nothing changed: nothing read
    assert watch.reads == reads

    wake.clear()
    zk.set(LAYOUT.assignment("t3"), assignment("t3", 6701))
    wait_for(lambda: "t3" in watch.fired, 10, "t3's watch to fire")
    assert wake.is_set()
    assert watch.refresh(3.0)
    assert watch.reads == reads + 1  # one node, not five
    assert watch.assignments["t3"].task_slots == {1: ("s1", 6701)}

    zk.create(LAYOUT.assignment("t9"), assignment("t9", 6702))
    zk.delete(LAYOUT.assignment("t0"))
    wait_for(lambda: watch.children == {"t1", "t2", "t3", "t4", "t9"}, 10, "children")
    wait_for(lambda: "t9" in watch.fired, 10, "t9's watch")
    assert watch.refresh(4.0)
    assert sorted(watch.assignments) == ["t1", "t2", "t3", "t4", "t9"]
    assert watch.reads <= reads + 1 + 2  # t9, and t0 if its deletion fired first

    before = watch.reads
    assert watch.refresh(30 + 1.0)  # the safety net: every assignment again
    assert watch.reads == before + 5


def test_a_lost_session_reads_everything_next(zk):
    watch = AssignmentWatch(zk, LAYOUT, full_every=30, wake=threading.Event())
    watch.start()
    watch.refresh(0.0)
    watch.refresh(0.5)
    before = watch.reads
    watch.read_all_next()
    assert watch.refresh(1.0)
    assert watch.reads == before + len(watch.assignments)


def test_an_unreadable_assignment_keeps_the_last_one_read(zk):
    """A node this supervisor cannot read is not a deleted topology: dropping it stopped the
    topology's workers; the last assignment read stays, with the reason to report."""
    layout = ZkLayout("/unreadable")
    zk.create(layout.assignment("t"), assignment("t", 6700), makepath=True)
    wake = threading.Event()
    watch = AssignmentWatch(zk, layout, full_every=30, wake=wake)
    watch.start()
    watch.refresh(0.0)
    assert watch.assignments["t"].task_slots == {1: ("s1", 6700)} and watch.unreadable == {}

    zk.set(layout.assignment("t"), b'{"a newer format": true}')
    wait_for(lambda: "t" in watch.fired, 10, "t's watch to fire")
    assert watch.refresh(1.0)
    assert watch.assignments["t"].task_slots == {1: ("s1", 6700)}
    assert set(watch.unreadable) == {"t"} and "/unreadable/assignments/t" in watch.unreadable["t"]
    assert watch.refresh(31.0)  # the full re-read keeps it too
    assert "t" in watch.assignments and set(watch.unreadable) == {"t"}

    zk.set(layout.assignment("t"), assignment("t", 6701))
    wait_for(lambda: "t" in watch.fired, 10, "t's watch to fire again")
    assert watch.refresh(32.0)
    assert watch.assignments["t"].task_slots == {1: ("s1", 6701)} and watch.unreadable == {}

    zk.delete(layout.assignment("t"))  # gone is still gone
    wait_for(lambda: watch.children == set(), 10, "children")
    assert watch.refresh(33.0)
    assert watch.assignments == {}
