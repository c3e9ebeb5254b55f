"""Tick tuples (topology.tick.tuple.freq.secs): when a tick is due (worker/tick_tuples.py,
time passed in), the component's conf over the topology's, and what a bolt task does with one
(worker/bolt_executor.py): process_tick or process, unanchored, never acked, failed or
counted; a SparkBolt's tick runs its partial micro-batch; a shell bolt sends it on as Storm
does and ignores its fail."""

import threading
import time

import pytest

from squall import Bolt, Grouping, Spout, Topology
from squall.components import SparkBolt, TaskContext, Tuple, is_tick
from squall.local import wait_for
from squall.shell_components import ShellBolt, ShellFailure
from squall.testing import run
from squall.worker import multilang_exchanges as X
from squall.worker.acking import AckTree, FailTree
from squall.worker.bolt_executor import BoltExecutor, SparkBoltExecutor
from squall.worker.delivery import TupleDelivery
from squall.worker.executor_factory import make_executor
from squall.worker.tick_tuples import (
    TICK_KEY,
    TickConfError,
    TickSchedule,
    tick_freq,
    tick_tuple,
)
from tests.unit.recording_io import RecordingIO

from .test_micro_batches import FakeSpark

CONF = {"topology.message.timeout.secs": 30}


# --- when ticks are due ---


def test_the_first_poll_starts_the_clock_and_ticks_come_every_period_after_it():
    ticks = TickSchedule(2)
    assert ticks.wait(100.0) == 2.0
    assert not ticks.poll(100.0)  # the task's first turn: the clock starts
    assert not ticks.poll(101.9) and ticks.wait(101.0) == 1.0
    assert ticks.poll(102.0) and not ticks.poll(102.5)
    assert ticks.wait(102.5) == 1.5
    assert ticks.poll(104.3)  # late by 0.3: the next one stays on the beat
    assert ticks.next_at == 106.0


def test_a_task_busy_past_several_due_times_gets_one_tick_and_keeps_the_beat():
    ticks = TickSchedule(1, next_at=10.0)
    assert ticks.poll(13.5)
    assert not ticks.poll(13.9) and ticks.next_at == 14.0
    assert ticks.poll(14.0) and ticks.wait(14.0) == 1.0


@pytest.mark.parametrize("value", [0, -1, 1.5, True, "5", [1]])
def test_a_period_that_is_not_a_whole_number_of_seconds_of_at_least_one_is_refused(value):
    with pytest.raises(TickConfError, match=f"component 'counter': {TICK_KEY}"):
        tick_freq({TICK_KEY: value}, "counter")


def test_unset_means_no_ticks():
    assert tick_freq({}, "c") is None and tick_freq({TICK_KEY: None}, "c") is None
    assert tick_freq({TICK_KEY: 3}, "c") == 3


def test_a_tick_tuple_is_storms():
    tup = tick_tuple(5)
    assert (tup.source_component, tup.source_task, tup.stream) == ("__system", -1, "__tick")
    assert tup["rate_secs"] == 5 and list(tup) == [5] and tup.ids == {}
    assert is_tick(tup) and not is_tick(Tuple("__system", -1, "__heartbeat", (), ()))


# --- the component's conf over the topology's ---


class Quiet(Spout):
    outputs = ["n"]

    def next_tuple(self):
        return False


class Recording(Bolt):
    outputs = ["n"]

    def __init__(self, **kwargs):
        super().__init__(**kwargs)
        self.seen = []

    def process(self, tup):
        self.seen.append(("process", tup))
        if not is_tick(tup):
            self.emit([tup.values[0]])


class Ticking(Recording):
    def process_tick(self, tup):
        self.seen.append(("tick", tup))
        self.emit(["tick"])


class Raising(Bolt):
    def process_tick(self, tup):
        raise ValueError("tick went wrong")


class Ticked(Topology):
    config = {TICK_KEY: 5}
    s = Quiet.spec()
    plain = Recording.spec(inputs={s: Grouping.shuffle})
    fast = Recording.spec(inputs={s: Grouping.shuffle}, config={TICK_KEY: 1})
    never = Recording.spec(inputs={s: Grouping.shuffle}, config={TICK_KEY: None})


def IO():  # noqa: N802 - reads as the class it was
    return RecordingIO(lambda *route: [7])


def executor(name, component, conf):
    context = TaskContext("t", name, 3, (3,), "/tmp")
    return make_executor(Ticked.structure(), component, context, conf, IO())


def test_a_components_own_period_overrides_the_topologys_and_none_turns_ticks_off():
    conf = {**CONF, **Ticked.config}
    assert executor("plain", Recording(), conf).ticks.freq == 5
    assert executor("fast", Recording(), conf).ticks.freq == 1
    assert executor("never", Recording(), conf).ticks is None
    assert executor("fast", Recording(), CONF).ticks.freq == 1  # set on the component only
    assert executor("s", Quiet(), conf).__class__.__name__ == "SpoutExecutor"  # spouts: none
    assert not hasattr(executor("s", Quiet(), conf), "ticks")


def test_a_bad_period_stops_the_task_from_being_built_with_a_clear_error():
    with pytest.raises(TickConfError, match="'plain'"):
        executor("plain", Recording(), {**CONF, TICK_KEY: 0})


# --- what a bolt task does with a tick ---


def bolt(component, ticks):
    ex = BoltExecutor(
        component, TaskContext("t", "b", 3, (3,), "/tmp"), {"default": ("n",)}, CONF, IO()
    )
    ex.ticks = ticks
    return ex


def test_a_due_tick_reaches_process_tick_after_the_inputs_and_is_neither_anchored_nor_acked():
    component = Ticking()
    ex = bolt(component, TickSchedule(2, next_at=time.monotonic()))  # the beat starts now
    ex.inbox.put(Tuple("s", 1, "default", ("n",), (42,), {500: 8}))
    wait = ex.turn()
    assert [kind for kind, _ in component.seen] == ["process", "tick"]
    assert component.seen[1][1] == tick_tuple(2)
    assert wait == 0.0  # inputs were taken: look again at once
    trees = [d for d in ex.io.sent if isinstance(d, TupleDelivery) and d.target == 99]
    assert [d.values[0] for d in trees] == [500]  # the input's ack only
    emitted = {d.values: d.roots for d in ex.io.sent if d.target == 7}
    assert emitted == {(42,): (500,), ("tick",): ()}  # the tick's emit is untracked
    assert (ex.stats.executed, ex.stats.acked, ex.stats.failed) == (1, 1, 0)
    assert ex.turn() <= 2.0 and len(component.seen) == 2  # the next one in 2 s


def test_a_bolt_without_process_tick_gets_the_tick_in_process_as_storms_execute():
    component = Recording()
    ex = bolt(component, TickSchedule(1, next_at=0.0))
    ex.turn()
    assert component.seen == [("process", tick_tuple(1))]
    assert ex.io.sent == [] and ex.stats.executed == 0


def test_a_tick_that_raises_is_reported_and_is_no_failed_tuple():
    ex = bolt(Raising(), TickSchedule(1, next_at=0.0))
    ex.turn()
    assert len(ex.io.errors) == 1 and ex.io.errors[0].startswith("ValueError: tick went wrong")
    assert not any(isinstance(d, (AckTree, FailTree)) for d in ex.io.sent) and ex.io.sent == []
    assert ex.stats.failed == 0 and ex.fatal is None


def test_an_idle_bolt_waits_no_longer_than_its_next_tick():
    ex = bolt(Recording(), TickSchedule(1))
    assert ex.turn() <= 1.0  # the first turn starts the clock
    assert bolt(Recording(), None).turn() == 0.2


class Windowed(SparkBolt):
    outputs = ["n"]

    def __init__(self):
        super().__init__()
        self.ticks = []
        self.jobs = []

    def process_batch(self, df):
        self.jobs.append(df)

    def process_tick(self, tup):
        self.ticks.append(tup)


def spark_bolt(conf):
    conf = {**CONF, "topology.batch.size": 100, "topology.batch.timeout.ms": 60_000, **conf}
    return SparkBoltExecutor(
        Windowed(),
        TaskContext("t", "w", 4, (4,), "/tmp"),
        {"default": ("n",)},
        conf,
        IO(),
        spark=FakeSpark(),
        input_fields={("s", "default"): ("n",)},
    )


def test_a_spark_bolts_tick_runs_its_partial_micro_batch():
    ex = spark_bolt({})
    ex.ticks = TickSchedule(3, next_at=10.0)
    inputs = [Tuple("s", 1, "default", ("n",), (n,)) for n in range(3)]
    assert ex.gathered(inputs, 9.0) == ([], 0)  # neither full nor old, no tick yet
    jobs, ticked = ex.gathered([], 10.0)
    assert ticked == 3 and [job.items for job in jobs] == [tuple(inputs)]
    assert ex.gathered([], 10.5) == ([], 0) and ex.batcher.rows == 0
    ex.tick(ticked)
    assert ex.component.ticks == [tick_tuple(3)]


def test_a_running_spark_bolt_flushes_on_its_tick_long_before_the_batch_timeout():
    ex = spark_bolt({TICK_KEY: 1})
    ex.start()
    try:
        ex.inbox.put_many([Tuple("s", 1, "default", ("n",), (n,)) for n in range(3)])
        wait_for(lambda: ex.component.jobs, 30, "the tick's micro-batch")
        assert ex.component.jobs == [(("n",), [(0,), (1,), (2,)])]
        wait_for(lambda: ex.component.ticks, 30, "process_tick after it")
    finally:
        ex.stop()
        ex.thread.join(10)
    assert ex.fatal is None and ex.io.errors == []


# --- a shell bolt ---


class FakeShellTask:
    """Stands in for ShellTask: records what is sent, answers with the given verdict and
    the given error reports."""

    what = "shell bolt b:3"

    def __init__(self, ok, reported=()):
        self.ok = ok
        self.reported = list(reported)
        self.messages = []

    def exchange(self, message, step):
        self.messages.append(message)
        return X.Done(self.ok)

    def take_reported(self):
        reported, self.reported = self.reported, []
        return reported


def shell_bolt(task):
    shell = ShellBolt(execution_command="true", script="")
    shell.ids = iter(["1"])
    shell.task = task
    return shell


@pytest.mark.parametrize("ok", [True, False])
def test_a_shell_bolt_sends_the_tick_as_storm_does_and_its_fail_is_no_failure(ok):
    shell = shell_bolt(FakeShellTask(ok))
    shell.process_tick(tick_tuple(2))
    assert shell.task.messages == [
        {"id": "1", "comp": "__system", "stream": "__tick", "task": -1, "tuple": [2]}
    ]


def test_what_a_shell_bolt_reported_during_a_tick_is_raised_at_once():
    shell = shell_bolt(FakeShellTask(False, ["process_tick: KeyError 'x'"]))
    with pytest.raises(ShellFailure, match="shell bolt b:3 reported: process_tick: KeyError"):
        shell.process_tick(tick_tuple(2))


# --- in one process (squall.testing), as in a worker ---


TICKED = threading.Event()


class UntilTicked(Spout):
    """Emits numbers, tracked, until the window bolt got its first tick (a few a poll,
    throttled so a second of them stays small), then runs dry."""

    outputs = ["n"]

    def initialize(self, conf, context):
        self.n = 0

    def next_tuple(self):
        if TICKED.is_set():
            return False
        time.sleep(0.005)  # a throttle, not a wait: the run ends on the tick, whenever
        self.n += 1
        self.emit([self.n], msg_id=self.n)
        return True


class Window(Bolt):
    """Counts its inputs and emits the count on each tick: a windowed flush."""

    outputs = ["count"]

    def initialize(self, conf, context):
        self.count = 0

    def process(self, tup):
        self.count += 1

    def process_tick(self, tup):
        self.emit([self.count])
        TICKED.set()


class Windowing(Topology):
    numbers = UntilTicked.spec()
    window = Window.spec(inputs={numbers: Grouping.shuffle}, config={TICK_KEY: 1})


def test_squall_testing_run_delivers_ticks_as_a_worker_does():
    TICKED.clear()
    result = run(Windowing, timeout=60)
    acked = result.acked["numbers"]
    assert TICKED.is_set() and acked and not result.failed["numbers"]
    [first, *_] = result.values("window")  # one count per tick, untracked
    assert 0 < first[0] <= len(acked) and not result.errors
