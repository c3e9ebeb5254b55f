"""Storm's XOR acking, driven through the real executors with a synchronous fake worker:
the acker completes a tree exactly when its last tuple is acked, never before."""

import pyarrow as pa
import pyarrow.compute as pc
import pytest

from squall import Bolt, Spout
from squall.components import Batch, TaskContext, Tuple
from squall.worker.acker import Acker
from squall.worker.acker_executor import AckerExecutor
from squall.worker.acking import (
    ACK_DONE,
    ACK_FAILED,
    ID_MAX,
    ID_MIN,
    AckTree,
    CallAck,
    FailTree,
    InitTree,
    Send,
    Tick,
    TreeDone,
    TreeFailed,
    message_delivery,
    message_stream,
    stream_message,
)
from squall.worker.bolt_executor import BoltExecutor
from squall.worker.delivery import TableDelivery, TupleDelivery
from squall.worker.executors import inbox_item
from squall.worker.spout_executor import SpoutExecutor

from .recording_io import FLUSH_EACH, RecordingIO

CONF = {"topology.message.timeout.secs": 30, "topology.max.spout.pending": 0, **FLUSH_EACH}


def FakeIO(routes, ackers=(99,)):  # noqa: N802 - reads as the class it was
    return RecordingIO(routes, ackers, errors="raise")


class Src(Spout):
    outputs = ["line"]

    def __init__(self):
        super().__init__()
        self.acked, self.failed = [], []

    def ack(self, msg_id):
        self.acked.append(msg_id)

    def fail(self, msg_id):
        self.failed.append(msg_id)


class Echo(Bolt):
    outputs = ["w"]


def ctx(name, task):
    return TaskContext("t", name, task, (task,), "/tmp")


def as_tuple(delivery):
    """What the target's inbox gets: a Tuple, or a protocol message on a system stream."""
    return inbox_item(delivery, ())


def run(bolt, inputs, ok=True):
    """One execution of a bolt: inputs taken, (emits by the caller), acked or failed."""
    bolt.take(inputs)
    return lambda: bolt.finish(ok)


def run_tree(fail_leaf=False):
    io = FakeIO({("src", "default"): [2], ("mid", "default"): [3, 4]})
    spout = Src()
    spout_ex = SpoutExecutor(spout, ctx("src", 1), {"default": ("line",)}, CONF, io)
    mid = BoltExecutor(Echo(), ctx("mid", 2), {"default": ("w",)}, CONF, io)
    acker = AckerExecutor(None, ctx("__acker", 99), {}, CONF, io)
    leaves = [BoltExecutor(Echo(), ctx("leaf", t), {"default": ("w",)}, CONF, io) for t in (3, 4)]

    spout_ex.emit(["a b"], "default", None, msg_id="m1")
    to_mid = [d for d in io.sent if d.target == 2]
    for d in [d for d in io.sent if d.target == 99]:
        acker.receive_many([as_tuple(d)], 0)
    io.sent.clear()

    # mid emits twice (each to two leaves) while processing its input, then acks it
    tup = as_tuple(to_mid[0])
    finish = run(mid, [tup])
    mid.emit(["a"], "default", None, None)
    mid.emit(["b"], "default", None, None)
    finish()
    to_leaves = [d for d in io.sent if d.target in (3, 4)]
    assert len(to_leaves) == 4
    acks = [d for d in io.sent if d.target == 99]
    io.sent.clear()
    for d in acks:
        acker.receive_many([as_tuple(d)], 0)
    assert not [d for d in io.sent if d.stream == ACK_DONE]  # leaves still pending

    for i, d in enumerate(to_leaves):
        leaf = leaves[0] if d.target == 3 else leaves[1]
        run(leaf, [as_tuple(d)], ok=not (fail_leaf and i == 3))()
        for a in [x for x in io.sent if x.target == 99]:
            io.sent.remove(a)
            acker.receive_many([as_tuple(a)], 0)
        done = [x for x in io.sent if x.stream in (ACK_DONE, ACK_FAILED)]
        if i < 3:
            assert not done, "completed before the last leaf acked"
    verdicts = [x for x in io.sent if x.stream in (ACK_DONE, ACK_FAILED)]
    assert len(verdicts) == 1 and verdicts[0].target == 1
    spout_ex.inbox.put(as_tuple(verdicts[0]))
    spout_ex.settle()
    return spout


def test_tree_completes_only_after_the_last_ack():
    spout = run_tree()
    assert spout.acked == ["m1"] and spout.failed == []


def test_a_failed_leaf_fails_the_spout_tuple():
    spout = run_tree(fail_leaf=True)
    assert spout.failed == ["m1"] and spout.acked == []


def test_batch_anchoring_with_shared_roots_stays_consistent():
    """Inputs sharing a root (words of one line in one micro-batch) anchor one output."""
    io = FakeIO({("b", "default"): [5]})
    bolt = BoltExecutor(Echo(), ctx("b", 4), {"default": ("w",)}, CONF, io)
    acker = Acker(timeout=30)
    root, e1, e2 = 77, 1001, 2002
    acker.received([InitTree(99, root, e1 ^ e2, spout_task=1)], now=0)
    inputs = [
        Tuple("s", 1, "default", (), ("x",), {root: e1}),
        Tuple("s", 1, "default", (), ("y",), {root: e2}),
    ]
    finish = run(bolt, inputs)
    bolt.emit(["xy"], "default", None, None)
    out = io.sent.pop()
    finish()
    verdicts = [acker.received([as_tuple(d)], now=0) for d in io.sent]
    # the output's id for the root cancelled out (anchored twice), so once both inputs are
    # acked the tree is complete, and only then
    assert (out.roots, out.ids) == ((), ())
    assert [len(v) for v in verdicts] == [0, 1] and root not in acker.trees


def test_acker_expires_old_trees():
    acker = Acker(timeout=30)
    acker.received([AckTree(99, 1, 5)], now=0)
    acker.expire(now=30)
    assert 1 in acker.trees
    acker.expire(now=31)
    assert not acker.trees


def test_untracked_emits_are_acked_at_once_without_ackers():
    spout = Src()
    io = FakeIO({("src", "default"): [2]}, ackers=())
    ex = SpoutExecutor(spout, ctx("src", 1), {"default": ("line",)}, CONF, io)
    ex.emit(["x"], "default", None, msg_id=5)
    assert spout.acked == []  # never inside next_tuple
    ex.settle()
    assert spout.acked == [5] and not ex.tracker.pending


class Split(Bolt):
    outputs = ["w"]

    def process(self, tup):
        for word in tup["line"].split():
            self.emit([word])


def test_a_batch_is_one_node_of_the_tree():
    """A spout batch is one tracked tuple: the tree completes once the bolt has processed
    every row of it and the rows' children are acked; a failing row fails the whole batch."""
    for failing_row in (None, "boom"):
        io = FakeIO({("src", "default"): [2], ("mid", "default"): [3]})
        spout = Src()
        spout_ex = SpoutExecutor(spout, ctx("src", 1), {"default": ("line",)}, CONF, io)
        acker = AckerExecutor(None, ctx("__acker", 99), {}, CONF, io)
        lines = ["a b", "c", failing_row or "d e"]
        spout_ex.emit_batch({"line": lines}, "default", None, msg_id="batch-1")
        [sent] = [d for d in io.sent if isinstance(d, TableDelivery)]
        assert sent.table.column("line").to_pylist() == lines and len(sent.roots) == 1

        class Picky(Split):
            def process(self, tup):
                if tup["line"] == "boom":
                    raise ValueError("bad row")
                super().process(tup)

        errors: list[str] = []
        io.report_error = lambda component, task, text, errors=errors: errors.append(text)
        mid = BoltExecutor(Picky(), ctx("mid", 2), {"default": ("w",)}, CONF, io)
        batch = inbox_item(sent, ("line",))
        assert isinstance(batch, Batch) and batch.ids == sent.anchors
        mid.execute(batch)
        words = [d for d in io.sent if isinstance(d, TupleDelivery) and d.target == 3]
        assert [d.values[0] for d in words][:3] == ["a", "b", "c"]
        for d in [d for d in io.sent if isinstance(d, TupleDelivery) and d.target == 99]:
            acker.receive_many([as_tuple(d)], 0)
        io.sent[:] = [
            d
            for d in io.sent
            if isinstance(d, TupleDelivery) and d.stream in (ACK_DONE, ACK_FAILED)
        ]
        if failing_row:
            assert errors and [d.stream for d in io.sent] == [ACK_FAILED]
            continue
        assert not io.sent  # the words are not acked yet
        for d in words:
            leaf = BoltExecutor(Echo(), ctx("leaf", 3), {"default": ("w",)}, CONF, io)
            run(leaf, [as_tuple(d)])()
        for d in [d for d in io.sent if d.target == 99]:
            acker.receive_many([as_tuple(d)], 0)
        assert [d.stream for d in io.sent if d.target == 1] == [ACK_DONE]
        spout_ex.inbox.put(as_tuple(next(d for d in io.sent if d.target == 1)))
        spout_ex.settle()
        assert spout.acked == ["batch-1"]


def test_emit_batch_checks_the_declared_fields():
    io = FakeIO({("src", "default"): [2]})
    ex = SpoutExecutor(Src(), ctx("src", 1), {"default": ("line",)}, CONF, io)
    for bad in ({"word": ["x"]}, pa.table({"a": [1], "b": [2]}), [["x"]]):
        try:
            ex.emit_batch(bad, "default", None, None)
        except ValueError as exc:
            assert "src" in str(exc)
        else:
            raise AssertionError(f"{bad!r} was accepted")
    ex.emit_batch(pa.table({"anything": ["x", "y"]}), "default", None, None)  # by position
    [d] = io.sent
    assert d.table.column_names == ["line"] and ex.stats.emitted["default"] == 2


class Lengths(Bolt):
    """Vectorized: defines process_table only."""

    outputs = ["n"]

    def process_table(self, batch):
        self.emit_batch({"n": pc.utf8_length(batch.table.column("line"))})


def test_a_vectorized_bolt_gets_batches_whole_and_single_tuples_as_one_row_batches():
    io = FakeIO({("mid", "default"): [3]})
    mid = BoltExecutor(Lengths(), ctx("mid", 2), {"default": ("n",)}, CONF, io)
    batch = Batch("src", 1, "default", ("line",), pa.table({"line": ["a", "bcd"]}))
    single = Tuple("src", 1, "default", ("line",), ("xy",))
    for item in (batch, single):
        mid.execute(item)
    assert mid.stats.executed == 3
    assert [d.table.column("n").to_pylist() for d in io.sent] == [[1, 3], [2]]


def test_a_plain_bolt_gets_a_batch_row_by_row_and_a_bolt_without_either_method_fails():
    seen = []

    class Rows(Bolt):
        def process(self, tup):
            seen.append(tup["line"])

    Rows().process_table(Batch("src", 1, "default", ("line",), pa.table({"line": ["a", "b"]})))
    assert seen == ["a", "b"]
    try:
        Echo().process(Tuple("src", 1, "default", ("line",), ("a",)))
    except NotImplementedError as exc:
        assert "Echo" in str(exc)
    else:
        raise AssertionError("a bolt without process or process_table accepted a tuple")


def test_protocol_messages_are_typed_on_the_wire_and_back():
    for message in (InitTree(9, 1, 2, 3), AckTree(9, 1, 2)):
        target, stream, values = message_stream(message)
        assert stream_message(target, stream, values) == message
    with pytest.raises(ValueError):
        stream_message(1, "default", [1])
    with pytest.raises(TypeError):
        message_stream(Tick(0))


class _Draws:
    """Hands out given getrandbits values, checking each is asked for 63 bits."""

    def __init__(self, *values):
        self.values = list(values)

    def getrandbits(self, k):
        assert k == 63
        return self.values.pop(0)


def test_acking_ids_are_non_zero_signed_63_bit_values():
    """63 bits: a machine word in the compiled build (see AckIds); they travel as int64."""
    from squall.worker.acking import AckIds

    ids = AckIds(_Draws(1 << 62, 0, (1 << 63) - 1))  # the first draw would be the id 0
    assert ids() == -(1 << 62)  # zero skipped; the lowest signed 63-bit value
    assert ids() == (1 << 62) - 1  # the highest


def test_ids_are_the_signed_63_bit_range_and_a_root_moved_to_a_near_acker_stays_in_it():
    """A spout draws a root and moves it to a near acker's residue (spout_tracking._root): a
    root moved past ID_MAX is drawn again, not sent as a 64-bit long."""
    from squall.worker.spout_tracking import SpoutTracker

    assert (ID_MIN, ID_MAX) == (-(1 << 62), (1 << 62) - 1)
    assert ID_MAX % 3 == 0  # so moving it to residue 2 (acker 12) would pass ID_MAX
    draws = iter([ID_MAX, 5, 7])  # two roots, then the edge id of the one Send
    tracker = SpoutTracker(1, (10, 11, 12), 30.0, 0, draws.__next__, near_ackers=(12,))
    out = tracker.emitted("m", (4,), now=0.0)
    assert out == [Send(4, (5,), (7,)), InitTree(12, 5, 7, 1)]


def test_a_protocol_message_is_addressed_by_its_first_field_and_nothing_else_is_one():
    messages = (InitTree(9, 1, 2, 3), AckTree(8, 1, 2), FailTree(7, 1))
    verdicts = (TreeDone(6, 1), TreeFailed(5, 1))
    assert [m.target for m in messages + verdicts] == [9, 8, 7, 6, 5]
    assert [m.acker for m in messages] == [9, 8, 7]
    assert [v.spout_task for v in verdicts] == [6, 5]
    delivery = message_delivery(AckTree(8, 1, 2))
    assert (delivery[0], delivery[3], delivery[4]) == (8, "__ack_ack", (1, 2))
    for other in (CallAck(1), Send(3)):  # tuples, but not of the protocol
        with pytest.raises(TypeError, match="not a protocol message"):
            message_delivery(other)
        with pytest.raises(TypeError, match="not a protocol message"):
            message_stream(other)
    with pytest.raises(TypeError):  # the compiled build refuses a non-tuple at the call
        message_delivery(Tick(0))


def test_a_spouts_figures_count_tuples_so_emitted_is_acked_failed_and_pending():
    """A tracked batch is one tree, but emitted counts its rows: acked, failed and pending
    count them too (counted in trees, 6,262 emitted showed against 5,753 acked, no loss)."""
    io = FakeIO({("src", "default"): [2]})
    spout = Src()
    ex = SpoutExecutor(spout, ctx("src", 1), {"default": ("line",)}, CONF, io)
    ex.emit_batch({"line": ["a", "b", "c"]}, "default", None, msg_id="b1")
    ex.emit_batch({"line": ["d", "e"]}, "default", None, msg_id="b2")
    ex.emit(["f"], "default", None, msg_id="t1")
    ex.settle()
    stats = ex.stats
    assert (stats.emitted["default"], stats.pending) == (6, 6)
    tree_of = {msg_id: root for root, (msg_id, _at) in ex.tracker.pending.items()}
    ex.inbox.put(stream_message(1, ACK_DONE, [tree_of["b1"]]))  # the acker's verdicts
    ex.inbox.put(stream_message(1, ACK_FAILED, [tree_of["b2"]]))
    ex.settle()
    assert (stats.acked, stats.failed, stats.pending) == (3, 2, 1)
    assert spout.acked == ["b1"] and spout.failed == ["b2"]


def test_without_ackers_a_batch_is_acked_in_tuples_at_once():
    ex = SpoutExecutor(Src(), ctx("src", 1), {"default": ("line",)}, CONF, FakeIO({}, ackers=()))
    ex.emit_batch({"line": ["a", "b", "c"]}, "default", None, msg_id=7)
    ex.settle()
    assert (ex.stats.emitted["default"], ex.stats.acked, ex.stats.pending) == (3, 3, 0)
