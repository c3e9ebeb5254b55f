"""The worker's watchdog over real executor threads (no sockets, no ZooKeeper): a bolt
blocked in process is found stalled with its own line named, an idle one never is, and a
task that ended as fatal is reported once as the reason to exit."""

import threading
import time

import pytest

from squall import Bolt
from squall.components import TaskContext, Tuple
from squall.local import wait_for
from squall.worker.bolt_executor import BoltExecutor
from squall.worker.watchdog import Watchdog
from tests.unit.recording_io import RecordingIO

CONF = {"topology.message.timeout.secs": 30, "topology.max.spout.pending": 0}


def IO():  # noqa: N802 - reads as the class it was
    return RecordingIO(ackers=(), errors="raise")


class Blocking(Bolt):
    def __init__(self, release):
        super().__init__()
        self.release = release
        self.entered = threading.Event()

    def process(self, tup):
        self.entered.set()
        self.release.wait(30)  # the line the watchdog must name


class BrokenStart(Bolt):
    def initialize(self, conf, context):
        raise ConnectionError("no such database: orders")


def executor(bolt, task=3):
    return BoltExecutor(bolt, TaskContext("t", "slow", task, (task,), "/tmp"), {}, CONF, IO())


@pytest.fixture
def release():
    event = threading.Event()
    yield event
    event.set()


def test_a_bolt_blocked_in_process_is_stalled_with_its_line_named(release):
    bolt = Blocking(release)
    ex = executor(bolt)
    reports = []
    dog = Watchdog({3: ex}, 5, lambda c, t, text: reports.append((c, t, text)))
    ex.start()
    try:
        for n in range(3):
            ex.inbox.put(Tuple("src", 1, "default", ("n",), (n,)))
        wait_for(bolt.entered.is_set, 10, "the bolt to take its first tuple")
        now = time.monotonic()
        assert dog.check(now) is None  # not yet past the timeout
        reason = dog.check(now + 6)
        assert reason is not None and reports == [("slow", 3, reason)]
        assert reason.startswith("bolt slow task 3 made no progress for ")
        assert "with 3 tuples waiting" in reason  # one in hand, two in the inbox
        assert "test_watchdog.py:" in reason and " in process (waiting in " in reason
    finally:
        ex.stop()
        release.set()
        ex.thread.join(10)


def test_an_idle_bolt_is_never_stalled():
    ex = executor(Blocking(threading.Event()))
    ex.start()
    try:
        wait_for(lambda: ex.stats.ready, 10, "the bolt to be initialized")
        dog = Watchdog({3: ex}, 5, lambda *a: pytest.fail(f"reported {a}"))
        assert dog.check(time.monotonic() + 3600) is None
    finally:
        ex.stop()
        ex.thread.join(10)


def test_a_task_that_could_not_start_is_the_reason_to_exit():
    ex = executor(BrokenStart(), task=5)
    reports = []
    dog = Watchdog({5: ex}, 120, lambda c, t, text: reports.append((c, t, text)))
    ex.start()
    ex.thread.join(10)
    reason = dog.check(time.monotonic())
    assert reason is not None and reason.splitlines()[0] == (
        "ConnectionError: no such database: orders"
    )
    assert reports == [("slow", 5, reason)]
