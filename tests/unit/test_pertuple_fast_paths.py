"""The per-tuple fast paths (#16 item 1): each method that skips an event object or a call
per tuple decides exactly what the general path decides, and what a peer sends on a system
stream is checked, not trusted."""

import logging
import random

import pyarrow as pa
import pytest

from squall import Bolt, Grouping, Spout, Topology
from squall.components import Batch, TaskContext, Tuple
from squall.config import ConfigError, load_defaults, validate
from squall.worker.acker import Acker
from squall.worker.acking import (
    SYSTEM_COMPONENT,
    AckTree,
    CallAck,
    CallFail,
    FailTree,
    InitTree,
    TreeDone,
    TreeFailed,
    message_delivery,
    stream_message,
)
from squall.worker.bolt_executor import BoltExecutor
from squall.worker.compact_frames import compact_deliveries, compact_frame, compact_rows
from squall.worker.delivery import TupleDelivery
from squall.worker.inbound import Inbound
from squall.worker.receive_queue import ReceiveQueue
from squall.worker.spout_tracking import SpoutTracker

from .recording_io import RecordingIO


def _messages(seed: int, trees: int) -> list:
    """Inits, acks and fails of `trees` trees, shuffled (acks may overtake their init)."""
    rng = random.Random(seed)
    out: list = []
    for root in range(1, trees + 1):
        edges = [rng.getrandbits(63) + 1 for _ in range(3)]
        out.append(InitTree(1, root, edges[0] ^ edges[1], 7))
        out.append(AckTree(1, root, edges[0] ^ edges[2]))
        if root % 5:  # most complete, every fifth waits for an ack that never comes
            out.append(AckTree(1, root, edges[1] ^ edges[2]))
        if root % 7 == 0:
            out.append(FailTree(1, root))
    rng.shuffle(out)
    return out


def test_a_wake_ups_messages_at_once_decide_what_one_at_a_time_decide():
    messages = _messages(seed=16, trees=300)
    one_by_one, at_once = Acker(timeout=30), Acker(timeout=30)
    expected = [v for m in messages[:400] for v in one_by_one.received([m], 1.0)]
    expected += [v for m in messages[400:] for v in one_by_one.received([m], 2.0)]
    got = at_once.received(messages[:400], 1.0) + at_once.received(messages[400:], 2.0)
    assert got == expected and at_once.trees == one_by_one.trees
    assert any(type(v) is TreeDone for v in got) and any(type(v) is TreeFailed for v in got)
    with pytest.raises(TypeError):
        at_once.received([TreeDone(1, 2)], 3.0)


def test_the_spout_trackers_verdicts_at_once_match_one_at_a_time():
    def tracker() -> SpoutTracker:
        t = SpoutTracker(1, (9,), 30.0, 0, AckIdsFrom(5))
        for msg in "abc":
            t.emitted(msg, (2,), now=1.0)
        return t

    one_by_one, at_once = tracker(), tracker()
    roots = list(one_by_one.pending)
    verdicts = [TreeDone(1, roots[0]), TreeFailed(1, roots[1]), TreeDone(1, 12345)]
    expected = [i for v in verdicts for i in one_by_one.verdicts([v], 1.5)]
    assert at_once.verdicts(verdicts, 1.5) == expected == [CallAck("a"), CallFail("b")]
    assert list(at_once.pending) == list(one_by_one.pending) == [roots[2]]
    assert at_once.latency.count == one_by_one.latency.count == 1
    assert at_once.verdicts([AckTree(1, roots[2], 3)], 2.0) == []  # an ack: not to this one
    with pytest.raises(TypeError, match="acker verdicts"):
        at_once.verdicts([InitTree(1, roots[2], 3, 1)], 2.0)


class AckIdsFrom:
    """Ids from a seeded generator (non-zero)."""

    def __init__(self, seed: int) -> None:
        self.rng = random.Random(seed)

    def __call__(self) -> int:
        return self.rng.getrandbits(62) + 1


def test_protocol_messages_cross_the_wire_as_their_system_tuples_and_back():
    for message in (
        InitTree(3, -5, 6, 1),
        AckTree(3, 1 << 62, -7),
        FailTree(3, 8),
        TreeDone(1, 9),
        TreeFailed(1, 10),
    ):
        d = message_delivery(message)
        assert d.target == message.target and d.component == SYSTEM_COMPONENT
        assert stream_message(d.target, d.stream, d.values) == message


@pytest.mark.parametrize(
    "stream, values",
    [("__ack_ack", (1,)), ("__ack_init", (1, 2, 3, 4)), ("__ack_ack", (1, "x")), ("x", (1,))],
)
def test_a_malformed_system_tuple_is_a_value_error(stream, values):
    with pytest.raises(ValueError):
        stream_message(1, stream, values)


def NoIO():  # noqa: N802 - reads as the class it was
    """The TaskIO a bolt's inbox needs here: none is used (nothing is executed)."""
    return RecordingIO(ackers=(), errors="raise")


class Words(Spout):
    outputs = ["w"]


class Sink(Bolt):
    outputs = ["w"]

    def process(self, tup):
        pass


class WordsToSinks(Topology):
    s = Words.spec()
    b = Sink.spec(inputs={s: Grouping.shuffle}, par=2)


def sinks(conf: dict) -> dict:
    """WordsToSinks's two Sink tasks (1 and 2) as bolt executors, by task."""
    made = {}
    for task in (1, 2):
        context = TaskContext("t", "b", task, (1, 2), "/tmp")
        made[task] = BoltExecutor(Sink(), context, {"default": ("w",)}, conf, NoIO())
    return made


def test_a_malformed_ack_from_a_peer_is_dropped_and_logged_and_the_rest_delivered(caplog):
    class T(Topology):
        s = Words.spec()
        b = Sink.spec(inputs={s: Grouping.shuffle})

    conf = {"topology.message.timeout.secs": 30, "topology.executor.receive.buffer.size": 10}
    context = TaskContext("t", "b", 1, (1,), "/tmp")
    bolt = BoltExecutor(Sink(), context, {"default": ("w",)}, conf, NoIO())
    inbound = Inbound(T.structure(), {1: bolt})
    arrived = [
        TupleDelivery(1, SYSTEM_COMPONENT, 0, "__ack_ack", (5,)),  # one value short
        TupleDelivery(1, SYSTEM_COMPONENT, 0, "__ack_ack", (5, 6)),
        TupleDelivery(1, "s", 2, "default", ("a",), (5,), (6,)),
    ]
    with caplog.at_level(logging.WARNING, logger="squall.worker"):
        inbound.deliver_many(arrived)  # the receive thread's call: must not raise
    assert "malformed __ack_ack" in caplog.text
    taken = bolt.inbox.take(10, 0)
    assert taken[0] == AckTree(1, 5, 6) and len(taken) == 2
    assert taken[1].values == ("a",) and taken[1].ids == {5: 6}


def test_a_compact_frames_rows_become_what_deliver_many_makes_of_its_deliveries():
    """Inbound.deliver_rows (a remote frame's columns straight into Tuples) puts on each
    queue exactly what deliver_many puts for the frame's TupleDeliveries, in order; what it
    does not handle it leaves to deliver_many, putting nothing."""
    conf = {"topology.message.timeout.secs": 30, "topology.executor.receive.buffer.size": 10}
    rows = [  # uneven anchors: one root, none, two
        TupleDelivery(1 + i % 2, "s", 3, "default", (f"w{i}",), *anchors)
        for i, anchors in enumerate([((5,), (6,)), ((), ()), ((7, 8), (9, 10))] * 3)
    ]
    frame = compact_frame("s", "default", rows, 1)
    by_rows, by_deliveries = sinks(conf), sinks(conf)
    general = Inbound(WordsToSinks.structure(), by_deliveries)
    general.deliver_many(compact_deliveries(frame))
    fast = Inbound(WordsToSinks.structure(), by_rows)
    assert not fast.deliver_rows(compact_rows(frame))  # the stream's fields are not cached
    fast.fields_of("s", "default")
    assert fast.deliver_rows(compact_rows(frame))
    for task in (1, 2):
        got, expected = by_rows[task].inbox.take(20, 0), by_deliveries[task].inbox.take(20, 0)
        assert got == expected and len(got) == {1: 5, 2: 4}[task]
        assert [(t.roots, t.root_ids) for t in got] == [(t.roots, t.root_ids) for t in expected]
        assert {type(t) for t in got} == {Tuple}
    elsewhere = [*rows, TupleDelivery(9, "s", 3, "default", ("x",))]  # task 9 is not here
    assert not fast.deliver_rows(compact_rows(compact_frame("s", "default", elsewhere, 1)))
    acks = [TupleDelivery(1, "s", 3, "__ack_ack", (5, 6))]  # an ack is no data Tuple
    assert fast.fields_of("s", "__ack_ack") == ("root", "xor")  # and is not cached
    assert not fast.deliver_rows(compact_rows(compact_frame("s", "__ack_ack", acks, 2)))
    assert by_rows[1].inbox.empty() and by_rows[2].inbox.empty()


def test_a_protocol_frames_messages_go_where_deliver_many_puts_them():
    """Inbound.deliver_protocol (a protocol frame's messages, one put per target) puts on
    each queue what deliver_many puts for the same messages, in order; a message for a task
    this worker does not run is dropped by both."""
    conf = {"topology.message.timeout.secs": 30}
    messages = [AckTree(1 + i % 3 % 2, 100 + i, i) for i in range(12)]  # tasks 1, 2, 1, 1, ...
    messages.insert(5, AckTree(9, 5, 6))  # task 9 is not here
    by_frame, by_deliveries = sinks(conf), sinks(conf)
    Inbound(WordsToSinks.structure(), by_deliveries).deliver_many(messages)
    Inbound(WordsToSinks.structure(), by_frame).deliver_protocol(messages)
    for task in (1, 2):
        got, expected = (
            by_frame[task].inbox.take_protocol(),
            by_deliveries[task].inbox.take_protocol(),
        )
        assert got == expected == [m for m in messages if m.acker == task]
        assert by_frame[task].inbox.empty()


def test_a_queue_weighs_only_its_tables_and_counts_everything_else_one_row():
    asked = []

    def weight(item):
        asked.append(item)
        return len(item)

    q = ReceiveQueue(capacity=5, weight=weight, weighed=Batch)
    table = Batch("s", 1, "default", ("w",), pa.table({"w": [1, 2, 3]}))
    q.put_many(["x", table, "y"])
    assert q.rows == 5 and not q.has_room() and asked == [table]
    assert q.take(2, 0) == ["x", table] and q.rows == 1


def test_the_gil_switch_interval_is_a_positive_number_of_microseconds():
    assert load_defaults()["topology.worker.gil.switch.micros"] == 500
    with pytest.raises(ConfigError):
        validate({"topology.worker.gil.switch.micros": 0}, load_defaults(), "test")


_GC_PROBE = """
import gc, sys
from squall.worker.main import tune_garbage_collector
before = gc.get_threshold()
tune_garbage_collector(None if sys.argv[1] == "null" else int(sys.argv[1]))
young = gc.get_threshold()[0]
print(young if young != before[0] else "unchanged", gc.get_threshold()[1:] == before[1:],
      gc.get_freeze_count() > 0)
"""


@pytest.mark.parametrize(
    ("young", "printed"), [("null", "unchanged True False"), ("20000", "20000 True True")]
)
def test_a_worker_tunes_the_garbage_collector_only_when_asked(young, printed):
    """In a process of its own: the collector's settings are the whole interpreter's."""
    import subprocess
    import sys

    run = subprocess.run(
        [sys.executable, "-c", _GC_PROBE, young], capture_output=True, text=True, check=True
    )
    assert run.stdout.split() == printed.split()


def test_the_young_threshold_is_a_positive_number_by_default():
    assert load_defaults()["topology.worker.gc.young.threshold"] == 20000
    with pytest.raises(ConfigError):
        validate({"topology.worker.gc.young.threshold": 0}, load_defaults(), "test")
