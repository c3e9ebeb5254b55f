"""A worker's heartbeat round without ZooKeeper (no sockets: the agent is a stand-in that
raises what kazoo raises while it has no server or quorum): the round is skipped, the worker
keeps running, and the next round beats again. Before, the ConnectionLoss ended the worker
and its supervisor restarted every task of it (test_zookeeper_ensemble caught it)."""

import threading

import pytest
from kazoo.exceptions import ConnectionLoss, NoAuthError, SessionExpiredError

from squall.worker.main import WorkerProcess


class Agent:
    def __init__(self, failures):
        self.failures = list(failures)
        self.beats = 0

    def beat(self, uptime_secs, tasks):
        if self.failures:
            raise self.failures.pop(0)
        self.beats += 1

    def recheck_assignment(self):
        pass


class Errors:
    def __init__(self):
        self.reported = 0

    def report_held_back(self):
        self.reported += 1

    def write_pending(self):
        pass


def worker(agent):
    w = WorkerProcess.__new__(WorkerProcess)  # only what a heartbeat round touches
    w.agent, w.errors, w.executors = agent, Errors(), {}
    w.started, w.topology_ready, w.stopping = 0.0, True, threading.Event()
    w.topology_workers, w.beat_period, w.beat_due, w.beaten_ready = 1, 1.0, 0.0, frozenset()
    return w


def test_a_round_without_zookeeper_is_skipped_and_the_next_one_beats():
    agent = Agent([ConnectionLoss(), SessionExpiredError()])
    w = worker(agent)
    w._zookeeper_round()
    w._zookeeper_round()
    assert agent.beats == 0 and w.errors.reported == 0 and not w.stopping.is_set()
    w._zookeeper_round()
    assert agent.beats == 1 and w.errors.reported == 1


def test_other_zookeeper_errors_still_surface():
    with pytest.raises(NoAuthError):  # a refused write is no outage: it is not hidden
        worker(Agent([NoAuthError()]))._zookeeper_round()


def test_a_tasks_error_waits_for_zookeeper_and_is_written_by_a_later_round():
    """A task that wrote its own error report froze while ZooKeeper was suspended, and
    failed as fatal naming ConnectionLoss, not its error, once the session expired."""
    from squall.worker.error_reports import ErrorReports

    conf = {
        "topology.max.error.report.per.interval": 5,
        "topology.error.throttle.interval.secs": 10,
    }
    written, away = [], [ConnectionLoss()]

    def write(component, text):
        if away:
            raise away.pop()
        written.append((component, text))

    w = worker(Agent([]))
    w.errors = ErrorReports(conf, write, clock=lambda: 0.0)
    w.errors.report("split", 3, "ValueError: bad line")  # on a task's thread: only queued
    assert written == [] and len(w.errors.pending) == 1
    w._zookeeper_round()  # ZooKeeper away: kept
    assert written == [] and len(w.errors.pending) == 1 and not w.stopping.is_set()
    w._zookeeper_round()
    assert written == [("split", "ValueError: bad line")] and not w.errors.pending


class FlakyZk:
    """get() of a path answers from `nodes`, or raises the next of `failures` first."""

    def __init__(self, nodes, failures=()):
        self.nodes, self.failures = nodes, list(failures)

    def get(self, path):
        if self.failures:
            raise self.failures.pop(0)
        return self.nodes[path], Stat(mzxid=self.nodes["mzxid"])


class Stat:
    def __init__(self, mzxid):
        self.mzxid = mzxid


def test_an_assignment_whose_epoch_could_not_be_read_is_judged_by_a_later_round():
    """kazoo's watch records a change's version before its callback runs: a callback that
    failed to read the epoch lost that change for good (tuples routed to dead addresses)."""
    from squall.records import Assignment, encode
    from squall.worker.zk_agent import ZooKeeperAgent
    from squall.zk_layout import ZkLayout

    layout = ZkLayout("/s")
    moved = Assignment(3, "t", {"n": "h"}, {1: ("n", 6700), 2: ("n", 6701)}, {})
    nodes = {layout.nimbus_epoch: b"3", layout.assignment("t"): encode(moved), "mzxid": 42}
    zk = FlakyZk(nodes, [ConnectionLoss()])
    agent = ZooKeeperAgent(zk, layout, "t", ("n", 6700))
    seen = []
    agent._on_assignment = lambda a: seen.append(a) or True
    assert agent._judge(encode(moved), 42) is None  # the epoch read failed
    assert seen == [] and agent.missed_assignment
    zk.failures = [ConnectionLoss()]
    with pytest.raises(ConnectionLoss):  # still away: the round is skipped, it stays due
        agent.recheck_assignment()
    assert agent.missed_assignment
    agent.recheck_assignment()
    assert seen == [moved] and not agent.missed_assignment
    agent._judge(encode(moved), 41)  # an older change arriving late is not handed on
    agent._judge(encode(moved), 42)
    assert seen == [moved]
