"""A worker's reaction to its topology's record (worker/zk_reactions.py), without ZooKeeper:
the reaction is plain logic over the record it is handed."""

from __future__ import annotations

import threading

from squall.records import StormBase
from squall.worker.zk_reactions import ZooKeeperReactions


class Reactions(ZooKeeperReactions):
    """The state of a worker that `_status_changed` reads, with no tasks of its own."""

    def __init__(self, components: dict[int, str]) -> None:
        self.components = components
        self.stopping = threading.Event()
        self.activation = threading.Lock()
        self.executors = {}
        self.tid = "t-1"
        self.status_active = self.topology_ready = False


def base(counts: dict[str, int], status: str = "active") -> StormBase:
    return StormBase("t", status, 1000, 2, counts)


def test_a_status_change_of_the_same_tasks_goes_on():
    worker = Reactions({1: "a", 2: "b", 3: "c"})
    worker._status_changed(base({"a": 1, "b": 1, "c": 1}))
    assert worker.status_active and not worker.stopping.is_set()
    worker._status_changed(base({"a": 1, "b": 1, "c": 1}, "inactive"))
    assert not worker.status_active and not worker.stopping.is_set()


def test_tasks_numbered_anew_by_a_rebalance_restart_the_worker():
    """b from 1 to 2 executors: task 3 is b's now and c's is 4, so a worker whose own number
    stayed 3 would run c's code as b's task and route to c at a task that is b's."""
    worker = Reactions({1: "a", 2: "b", 3: "c"})
    worker._status_changed(base({"a": 1, "b": 2, "c": 1}))
    assert worker.stopping.is_set()


def test_a_topology_gone_stops_the_worker():
    worker = Reactions({1: "a"})
    worker._status_changed(None)
    assert worker.stopping.is_set()
