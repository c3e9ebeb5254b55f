"""The shell of a worker's life cycle (worker/zk_reactions.py) carrying out a round without
ZooKeeper (no sockets: the agent is a stand-in that raises what kazoo raises while it has no
server or quorum): the round is skipped, the worker keeps running, and the next round beats
again. Before, the ConnectionLoss ended the worker and its supervisor restarted every task of
it (test_zookeeper_ensemble caught it). The machine's own rules: test_worker_lifecycle.py."""

import threading

import pytest
from kazoo.exceptions import ConnectionLoss, NoAuthError, SessionExpiredError

from squall.records import Assignment, WorkerBeat
from squall.worker import lifecycle as lc
from squall.worker.readiness import READY_POLL_SECS
from squall.worker.zk_reactions import ZooKeeperReactions

SLOT = ("s1", 6700)
START = Assignment(3, "code", {"s1": "h1"}, {1: SLOT, 2: SLOT, 3: ("s2", 6700)}, {})


class Agent:
    def __init__(self, failures=(), others=None):
        self.failures = list(failures)
        self.beats_written = 0
        self.others = others or {}

    def write_beat(self):
        if self.failures:
            raise self.failures.pop(0)
        self.beats_written += 1

    def beats(self):
        if self.failures:
            raise self.failures.pop(0)
        return self.others

    def recheck_assignment(self):
        pass


class Errors:
    def __init__(self):
        self.reported = 0

    def report_held_back(self):
        self.reported += 1

    def write_pending(self):
        pass


class Stats:
    def __init__(self, ready):
        self.ready = ready


class Executor:
    def __init__(self, ready):
        self.stats = Stats(ready)
        self.emitting = False

    def activate(self, emit):
        self.emitting = emit


class Shell(ZooKeeperReactions):
    """The shell with stand-ins for what a round touches (no ZooKeeper, no tasks running)."""

    def __init__(self, agent, executors=None, ready=True, active=True):
        self.agent, self.errors, self.executors = agent, Errors(), executors or {}
        self.stopping, self.stepping, self.exit_code = threading.Event(), threading.Lock(), 0
        start = lc.begin(SLOT, START, 1.0, {1: "spout", 2: "spark", 3: "count"})
        self.life = lc.Lifecycle(**{**start.__dict__, "ready": ready, "active": active})
        self.beat = agent.write_beat


def test_a_round_without_zookeeper_is_skipped_and_the_next_one_beats():
    shell = Shell(Agent([ConnectionLoss(), SessionExpiredError()]))
    assert shell._zookeeper_round() == 1.0
    assert shell._zookeeper_round() == 1.0
    assert shell.agent.beats_written == 0 and shell.errors.reported == 0
    assert not shell.stopping.is_set() and shell.life.zookeeper_away
    shell._zookeeper_round()
    assert shell.agent.beats_written == 1 and shell.errors.reported == 1
    assert not shell.life.zookeeper_away


def test_other_zookeeper_errors_still_surface():
    with pytest.raises(NoAuthError):  # a refused write is no outage: it is not hidden
        Shell(Agent([NoAuthError()]))._zookeeper_round()


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

    shell = Shell(Agent([]))
    shell.errors = ErrorReports(conf, write, clock=lambda: 0.0)
    shell.errors.report("split", 3, "ValueError: bad line")  # on a task's thread: only queued
    assert written == [] and len(shell.errors.pending) == 1
    shell._zookeeper_round()  # ZooKeeper away: kept
    assert written == [] and len(shell.errors.pending) == 1 and not shell.stopping.is_set()
    shell._zookeeper_round()
    assert written == [("split", "ValueError: bad line")] and not shell.errors.pending


def beat(**tasks):
    return WorkerBeat(1, 0, 0, {int(t[1:]): {"ready": r} for t, r in tasks.items()})


def test_a_task_that_becomes_ready_is_beaten_at_once_and_spouts_start_on_the_next_look():
    spout, spark = Executor(True), Executor(False)
    shell = Shell(Agent(others={"s2-6700": beat(t3=True)}), {1: spout, 2: spark}, ready=False)
    assert shell._zookeeper_round() == READY_POLL_SECS and shell.agent.beats_written == 1
    assert shell._zookeeper_round() == READY_POLL_SECS and shell.agent.beats_written == 1
    spark.stats.ready = True  # its SparkSession came up between two looks
    shell.agent.others = {"s1-6700": beat(t1=True, t2=True), "s2-6700": beat(t3=True)}
    assert shell._zookeeper_round() == 1.0  # beaten at once, and the topology is ready now
    assert shell.agent.beats_written == 2 and shell.life.ready and spout.emitting


def test_while_zookeeper_is_away_a_waiting_worker_looks_once_a_period():
    shell = Shell(Agent(), {1: Executor(True)}, ready=False)
    shell.agent.beats = lambda: (_ for _ in ()).throw(ConnectionLoss())
    assert shell._zookeeper_round() == 1.0 and not shell.life.ready  # no 0.1 s warnings


def test_the_shell_carries_out_exits_and_ends_the_assignment_watch():
    shell = Shell(Agent())
    moved = Assignment(4, "code", {}, {1: SLOT, 2: ("s2", 6700), 3: ("s2", 6700)}, {})
    assert shell._assignment_changed(moved) is False
    assert shell.stopping.is_set() and shell.exit_code == 4
    assert shell._assignment_changed(START) is False  # exiting: nothing more


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
    from squall.zk.layout import ZkLayout

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
