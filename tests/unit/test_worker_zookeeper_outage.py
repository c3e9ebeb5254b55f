"""A worker's heartbeat round without ZooKeeper (no sockets: the agent is a stand-in that
raises what kazoo raises while it has no server or quorum): the round is skipped, the worker
keeps running, and the next round beats again. Before, the ConnectionLoss ended the worker
and its supervisor restarted every task of it (test_zookeeper_ensemble caught it)."""

import threading

import pytest
from kazoo.exceptions import ConnectionLoss, NoAuthError, SessionExpiredError

from squall.worker.main import Worker


class Agent:
    def __init__(self, failures):
        self.failures = list(failures)
        self.beats = 0

    def beat(self, uptime_secs, tasks):
        if self.failures:
            raise self.failures.pop(0)
        self.beats += 1


class Errors:
    def __init__(self):
        self.reported = 0

    def report_held_back(self):
        self.reported += 1


def worker(agent):
    w = Worker.__new__(Worker)  # only what a heartbeat round touches
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
