"""Executors taking turns on one shared thread (worker/executor_group.py), over real threads
and queues (no sockets, no ZooKeeper): every member runs, one whose start or turn fails ends
alone, a blocked member is the one the watchdog blames, and the tasks that block keep their
own threads."""

import dataclasses
import time

from squall import Bolt, Grouping, Spout, Topology
from squall.components import TaskContext, Tuple
from squall.local import wait_for
from squall.worker.acker_executor import AckerExecutor
from squall.worker.bolt_executor import BoltExecutor
from squall.worker.executor_group import ExecutorGroup, flow_depths, group_executors
from squall.worker.spout_executor import SpoutExecutor
from squall.worker.watchdog import Watchdog
from tests.unit.recording_io import RecordingIO

from .test_watchdog import Blocking, BrokenStart, release  # noqa: F401 - a fixture

CONF = {"topology.message.timeout.secs": 30, "topology.max.spout.pending": 0}


def IO():  # noqa: N802 - reads as the class it was
    return RecordingIO(ackers=(), errors="raise")


class Recording(Bolt):
    def initialize(self, conf, context):
        self.seen = []

    def process(self, tup):
        self.seen.append(tup.values[0])


class Sleepy(Bolt):
    own_thread = True


class Quiet(Spout):
    outputs = ["n"]

    def next_tuple(self):
        return False


def bolt(component, task):
    context = TaskContext("t", f"c{task}", task, (task,), "/tmp")
    return BoltExecutor(component, context, {}, CONF, IO())


def tup(n):
    return Tuple("src", 1, "default", ("n",), (n,))


def stopped(executors):
    for ex in executors:
        ex.stop()
    for ex in executors:
        ex.thread.join(10)


def test_members_take_turns_on_one_thread_and_each_gets_its_inputs_in_order():
    a, b = Recording(), Recording()
    group = ExecutorGroup([bolt(a, 2), bolt(b, 3)], "tasks")
    first, second = group.members
    assert first.thread is second.thread is group.thread
    for ex in group.members:
        ex.start()  # the first start starts the shared thread, the second is a no-op
    try:
        first.inbox.put_many([tup(n) for n in range(5)])
        second.inbox.put_many([tup(n) for n in range(3)])
        wait_for(lambda: len(a.seen) == 5 and len(b.seen) == 3, 10, "both bolts' inputs")
        assert a.seen == [0, 1, 2, 3, 4] and b.seen == [0, 1, 2]
    finally:
        stopped(group.members)
    assert not group.thread.is_alive() and not any(ex.running for ex in group.members)


def test_a_member_that_cannot_start_or_whose_turn_fails_ends_alone():
    good = Recording()
    broken, buggy, working = bolt(BrokenStart(), 5), bolt(Recording(), 6), bolt(good, 7)
    group = ExecutorGroup([broken, buggy, working], "tasks")
    reports = []
    dog = Watchdog(
        {5: broken, 6: buggy, 7: working}, 120, lambda c, t, text: reports.append((t, text))
    )
    buggy.inbox.put(object())  # an input no executor code expects: a bug outside user code
    working.start()
    try:
        wait_for(lambda: not broken.running and not buggy.running, 10, "both to end")
        working.inbox.put(tup(1))
        wait_for(lambda: good.seen == [1], 10, "the working member to go on")
        assert working.running and group.thread.is_alive()
        assert broken.fatal.splitlines()[0] == "ConnectionError: no such database: orders"
        assert buggy.fatal.splitlines()[0].startswith("AttributeError")
        reason = dog.check(time.monotonic())
        assert reports == [(5, reason)] and reason == broken.fatal
    finally:
        stopped(group.members)


class Exiting(Bolt):
    """A user's sys.exit(): threading ends a thread on SystemExit without a word."""

    def __init__(self, where):
        self.where = where

    def initialize(self, conf, context):
        if self.where == "initialize":
            raise SystemExit(2)

    def process(self, tup):
        raise SystemExit(3)


def test_a_sys_exit_in_user_code_ends_that_task_as_fatal_and_the_others_go_on():
    good = Recording()
    at_start, in_process, working = (
        bolt(Exiting("initialize"), 5),
        bolt(Exiting("process"), 6),
        bolt(good, 7),
    )
    group = ExecutorGroup([at_start, in_process, working], "tasks")
    dog = Watchdog({5: at_start, 6: in_process, 7: working}, 120, lambda c, t, text: None)
    working.start()
    try:
        in_process.inbox.put(tup(1))
        wait_for(lambda: not at_start.running and not in_process.running, 10, "both to end")
        working.inbox.put(tup(2))
        wait_for(lambda: good.seen == [2], 10, "the working member to go on")
        assert at_start.fatal.startswith("SystemExit") and in_process.fatal.startswith("SystemExit")
        assert dog.check(time.monotonic()) == at_start.fatal  # the worker exits and says why
    finally:
        stopped(group.members)


def test_a_sys_exit_on_a_task_of_its_own_thread_is_fatal_too():
    alone = bolt(Exiting("process"), 8)
    alone.start()
    try:
        alone.inbox.put(tup(1))
        wait_for(lambda: not alone.running, 10, "the task to end")
        assert alone.fatal is not None and alone.fatal.startswith("SystemExit")
    finally:
        stopped([alone])


def test_the_member_blocked_in_a_call_is_blamed_not_those_waiting_behind_it(release):  # noqa: F811
    blocking = Blocking(release)
    waiting, stuck = bolt(Recording(), 2), bolt(blocking, 3)
    group = ExecutorGroup([waiting, stuck], "tasks")
    reports = []
    dog = Watchdog({2: waiting, 3: stuck}, 5, lambda c, t, text: reports.append((t, text)))
    waiting.start()
    try:
        stuck.inbox.put(tup(1))
        wait_for(blocking.entered.is_set, 10, "the bolt to block")
        waiting.inbox.put_many([tup(2), tup(3)])  # task 2 now waits for the shared thread
        reason = dog.check(time.monotonic() + 6)
        assert reports == [(3, reason)]
        assert reason.startswith("bolt c3 task 3 made no progress for ")
    finally:
        release.set()
        stopped(group.members)


class Chain(Topology):
    """s -> c2 -> c3, and c4 reading both s and c3: the order tuples flow in."""

    s = Quiet.spec()
    c2 = Recording.spec(inputs={s: Grouping.shuffle})
    c3 = Sleepy.spec(inputs={c2: Grouping.shuffle})
    c4 = Recording.spec(inputs={s: Grouping.shuffle, c3: Grouping.shuffle})


def test_blocking_components_keep_their_own_threads_and_the_key_turns_sharing_off():
    executors = {
        1: SpoutExecutor(Quiet(), TaskContext("t", "s", 1, (1,), "/tmp"), {}, CONF, IO()),
        2: bolt(Recording(), 2),
        3: bolt(Sleepy(), 3),
    }
    own = {task: ex.thread for task, ex in executors.items()}
    structure = Chain.structure()
    assert group_executors(executors, structure, {"topology.worker.shared.thread": False}) == []
    assert all(ex.thread is own[task] for task, ex in executors.items())
    [group] = group_executors(executors, structure, {"topology.worker.shared.thread": True})
    assert group.members == [executors[1], executors[2]]
    assert executors[3].group is None and executors[3].thread is own[3]
    assert executors[1].thread is executors[2].thread is group.thread
    assert not executors[1].flush_waits and executors[3].flush_waits


def test_members_take_turns_in_the_order_tuples_flow_with_ackers_last():
    assert flow_depths(Chain.structure()) == {"s": 0, "c2": 1, "c3": 2, "c4": 3}
    acker = AckerExecutor(None, TaskContext("t", "__acker", 1, (1,), "/tmp"), {}, CONF, IO())
    executors = {1: acker, 2: bolt(Recording(), 4), 3: bolt(Recording(), 2)}
    spout_context = TaskContext("t", "s", 9, (9,), "/tmp")
    executors[9] = SpoutExecutor(Quiet(), spout_context, {}, CONF, IO())
    [group] = group_executors(executors, Chain.structure(), {})
    assert [m.context.component_id for m in group.members] == ["s", "c2", "c4", "__acker"]


def test_a_cycle_does_not_loop_forever():
    class Loop(Topology):
        s = Quiet.spec()
        a = Recording.spec(inputs={s: Grouping.shuffle})

    structure = Loop.structure()
    info = structure.components["a"]
    looped = dataclasses.replace(
        info, inputs=(*info.inputs, dataclasses.replace(info.inputs[0], component="a"))
    )
    structure = dataclasses.replace(structure, components={**structure.components, "a": looped})
    assert flow_depths(structure) == {"s": 0, "a": 1}


def test_the_transport_chores_run_around_every_round_and_a_failing_one_stops_nothing(caplog):
    seen = Recording()
    member = bolt(seen, 2)
    group = ExecutorGroup([member, bolt(Recording(), 3)], "tasks")
    calls = []

    def receive():  # what arrived goes in before the members' turns
        calls.append("before")
        if len(calls) == 1:
            raise RuntimeError("a bug in the transport")
        return 0.01

    group.before_round.append(receive)
    group.after_round.append(lambda: calls.append("after"))
    member.start()
    try:
        wait_for(lambda: calls.count("after") >= 3, 10, "a few rounds")
        member.inbox.put(tup(1))
        wait_for(lambda: seen.seen == [1], 10, "the member to go on")
        assert calls[:4] == ["before", "after", "before", "after"]
        assert "the transport failed on the shared thread" in caplog.text
    finally:
        stopped(group.members)


def test_an_after_round_chore_that_is_due_soon_shortens_the_idle_wait():
    """The pump gathers sends (up to the flush interval): an idle thread must wake for it,
    not sleep the half second an idle group may."""
    group = ExecutorGroup([bolt(Recording(), 2), bolt(Recording(), 3)], "tasks")
    waits: list[float] = []

    def idle(timeout):
        waits.append(timeout)
        group.wake.wait(timeout)

    group.after_round.append(lambda: 0.002)
    group.idle = idle
    group.members[0].start()
    try:
        wait_for(lambda: len(waits) >= 3, 10, "a few idle waits")
        assert max(waits) <= 0.002
    finally:
        stopped(group.members)


def test_a_failing_idle_poll_is_logged_and_the_thread_waits_on_its_wake_up(caplog):
    """The transport's idle poll raising (a closed socket, say) must not end the shared
    thread, which also receives and sends: it waits on its wake-up alone from then on."""
    seen = Recording()
    member = bolt(seen, 2)
    group = ExecutorGroup([member, bolt(Recording(), 3)], "tasks")

    def broken_poll(timeout):
        raise OSError("the poll failed")

    group.idle = broken_poll
    member.start()
    try:
        wait_for(lambda: "idle poll failed" in caplog.text, 10, "the failure logged")
        member.inbox.put(tup(1))  # a put from this thread wakes the thread's plain wait
        wait_for(lambda: seen.seen == [1], 10, "the member to go on")
        assert group.thread.is_alive() and group.idle == group.wake.wait
    finally:
        stopped(group.members)
