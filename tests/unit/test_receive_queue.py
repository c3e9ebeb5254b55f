"""The receive queue and the batched per-tuple path: many inputs per wake-up, protocol
messages first and never bounded, emits leaving as one list per flush, backpressure on a
full local queue."""

import threading

from squall import Bolt, Spout
from squall.components import TaskContext, Tuple
from squall.worker.bolt_executor import BoltExecutor
from squall.worker.receive_queue import ReceiveQueue
from squall.worker.spout_executor import SpoutExecutor

CONF = {
    "topology.message.timeout.secs": 30,
    "topology.max.spout.pending": 0,
    "topology.producer.batch.size": 3,
    "topology.batch.flush.interval.millis": 60_000,
    "topology.executor.receive.buffer.size": 4,
}


def test_protocol_messages_come_first_and_data_is_taken_up_to_the_limit():
    q = ReceiveQueue(capacity=2, weight=len)
    q.put_many(["ab", "c"])
    q.put_many(["ack1", "ack2"], protocol=True)
    assert q.rows == 3 and not q.has_room()  # a table of two rows counts two
    q.put_many(["x" * 100], protocol=True)  # protocol messages never count
    assert q.rows == 3
    assert q.take(3, 0) == ["ack1", "ack2", "x" * 100]  # all protocol, even past max
    assert q.take(1, 0) == ["ab"] and q.rows == 1 and q.has_room()
    assert q.take(10, 0) == ["c"] and q.empty() and q.take(10, 0) == []


def test_wait_room_wakes_when_the_executor_takes():
    q = ReceiveQueue(capacity=1)
    q.put_many([1, 2])
    assert not q.wait_room(0.01)
    taker = threading.Timer(0.05, lambda: q.take(5, 0))
    taker.start()
    try:
        assert q.wait_room(10)
    finally:
        taker.join()


class ManyIO:
    """A TaskIO whose tasks all run elsewhere: records each list flushed to send_many."""

    ackers = near_ackers = ()
    local_tasks: frozenset[int] = frozenset()

    def __init__(self, routes):
        self.routes, self.flushes, self.full = routes, [], set()

    def targets(self, component, task, stream, values, direct):
        return list(self.routes.get((component, stream), []))

    def deliver_local(self, data, protocol, source, stopping):
        raise AssertionError("no task runs here")

    def send_many(self, deliveries, stopping):
        self.flushes.append(list(deliveries))

    def congested(self, component):
        return any(t in self.full for routes in self.routes.values() for t in routes)

    def report_error(self, component, task, text):
        raise AssertionError(text)


class Twice(Bolt):
    outputs = ["w"]

    def process(self, tup):
        self.emit([tup.values[0]])
        self.emit([tup.values[0] * 2])


def test_a_bolt_flushes_its_emits_as_lists_of_the_producer_batch_size():
    io = ManyIO({("b", "default"): [7]})
    ex = BoltExecutor(
        Twice(), TaskContext("t", "b", 2, (2,), "/tmp"), {"default": ("w",)}, CONF, io
    )
    inputs = [Tuple("s", 1, "default", ("w",), (n,)) for n in range(4)]
    ex.execute_all(inputs)
    assert [len(f) for f in io.flushes] == [3, 3, 2]  # 8 emits, batch size 3, end of batch
    assert [d.values[0] for f in io.flushes for d in f] == [0, 0, 1, 2, 2, 4, 3, 6]
    assert ex.stats.executed == 4


class Counting(Spout):
    outputs = ["n"]

    def __init__(self):
        super().__init__()
        self.n = 0

    def next_tuple(self):
        self.n += 1
        return self.emit([self.n]) != []


def test_a_spout_burst_is_one_flush_and_emit_returns_the_task_ids():
    io = ManyIO({("s", "default"): [5, 6]})
    spout = Counting()
    ex = SpoutExecutor(spout, TaskContext("t", "s", 1, (1,), "/tmp"), {"default": ("n",)}, CONF, io)
    assert spout.emit([0]) == [5, 6]
    ex.flush()
    io.flushes.clear()
    assert ex.burst() and spout.n == 3  # producer batch size 3
    assert [[d.target for d in f] for f in io.flushes] == [[5, 6, 5], [6, 5, 6]]
    io.full.add(6)
    assert ex.congested()


def test_a_spouts_heartbeat_stats_carry_its_complete_latency():
    from squall.worker.acking import TreeDone

    io = ManyIO({("s", "default"): [5]})
    io.ackers = (9,)
    spout = Counting()
    ex = SpoutExecutor(spout, TaskContext("t", "s", 1, (1,), "/tmp"), {"default": ("n",)}, CONF, io)
    assert "complete_ms" not in ex.stats.snapshot()  # no ack yet
    spout.emit([1], msg_id="m")
    ex.flush()
    [root] = ex.tracker.pending
    ex.inbox.put(TreeDone(1, root), protocol=True)
    ex.settle()
    figures = ex.stats.snapshot()["complete_ms"]
    assert figures["count"] == 1 and 0 <= figures["p50"] == figures["p99"] == figures["avg"]


def _inbound():
    from squall import Grouping, Topology
    from squall.worker.inbound import Inbound

    class T(Topology):
        s = Counting.spec()
        b = Twice.spec(inputs={s: Grouping.shuffle})

    conf = {**CONF, "topology.executor.receive.buffer.size": 2}
    bolt = BoltExecutor(
        Twice(), TaskContext("t", "b", 1, (1,), "/tmp"), {"default": ("w",)}, conf, ManyIO({})
    )
    return Inbound(T.structure(), {1: bolt}), bolt


def held_until_taken(bolt, flush):
    """Run `flush(stopping)` on a thread: it must wait while the bolt's queue is full and go
    through once the bolt takes what it holds (returned)."""
    stopping = threading.Event()
    waiting = threading.Thread(target=flush, args=(stopping,))
    waiting.start()
    try:
        waiting.join(0.3)
        assert waiting.is_alive()  # held back while the queue is full
        taken = bolt.inbox.take(100, 0)
        waiting.join(10)
        assert not waiting.is_alive()  # room made: the flush went through
    finally:
        stopping.set()
        waiting.join(10)
    return taken


def test_a_flush_into_a_full_local_queue_waits_for_room_and_acks_never_wait():
    from squall.worker.acking import AckTree
    from squall.worker.delivery import TupleDelivery

    inbound, bolt = _inbound()
    data = [TupleDelivery(1, "s", 2, "default", (n,)) for n in range(3)]
    inbound.deliver_many(data[:2], threading.Event())  # fills the queue (capacity 2)
    assert inbound.congested(1) and not bolt.inbox.has_room()
    inbound.deliver_many([AckTree(1, 5, 6)], threading.Event())  # protocol: never waits
    inbound.deliver_many([TupleDelivery(1, "b", 1, "default", (9,))], threading.Event())  # self
    inbound.deliver_many(data[2:])  # the transport's receive thread: never waits
    taken = held_until_taken(bolt, lambda stopping: inbound.deliver_many(data[:1], stopping))
    assert [type(x).__name__ for x in taken][:1] == ["AckTree"] and len(taken) == 5
    assert [t.values for t in bolt.inbox.take(100, 0)] == [(0,)]
    stuck = threading.Event()
    inbound.deliver_many(data[:2], stuck)
    stuck.set()  # a stopping sender gives up waiting
    inbound.deliver_many(data[:1], stuck)
    assert bolt.inbox.qsize() == 3


class LocalIO(ManyIO):
    """ManyIO whose tasks 7 (a bolt) and 9 (the acker) run in this process: what is for
    them comes to `deliver_local`."""

    local_tasks = frozenset({7, 9})

    def __init__(self, routes):
        super().__init__(routes)
        self.local, self.local_protocol = [], []

    def deliver_local(self, data, protocol, source, stopping):
        self.local.append((source, {t: list(items) for t, items in data.items()}))
        self.local_protocol += [m for messages in protocol.values() for m in messages]


def test_a_tuple_for_a_task_of_this_worker_is_made_once_as_the_tuple_its_bolt_takes():
    io = LocalIO({("b", "default"): [7, 8]})
    io.ackers = (9,)
    ids = iter(range(100, 200))
    ex = BoltExecutor(
        Twice(),
        TaskContext("t", "b", 2, (2,), "/tmp"),
        {"default": ("w",)},
        CONF,
        io,
        new_id=lambda: next(ids),
    )
    ex.execute_all([Tuple("s", 1, "default", ("w",), (5,), {42: 1})])  # anchored to tree 42
    # 4 sends and 1 ack: a flush at the batch size (3), the rest at the end of the batch
    assert [source for source, _ in io.local] == [2, 2]
    assert [len(f) for f in io.flushes] == [1, 1]
    local = [t for _, data in io.local for t in data.get(7, ())]
    assert local == [
        Tuple("b", 2, "default", ("w",), (5,)),
        Tuple("b", 2, "default", ("w",), (10,)),
    ]
    assert [dict(t.ids) for t in local] == [{42: 100}, {42: 102}]  # each its own edge id
    remote = [d for f in io.flushes for d in f]
    assert [(type(d).__name__, d.target) for d in remote] == [
        ("TupleDelivery", 8),
        ("TupleDelivery", 8),
    ]
    assert remote[0].values == (5,) and remote[0].roots == (42,) and remote[0].ids == (101,)
    [ack] = io.local_protocol  # for the acker of this worker: no routing on its way
    assert type(ack).__name__ == "AckTree" and ack.target == 9
    assert ack.xor == 1 ^ 100 ^ 101 ^ 102 ^ 103  # the input's id, XOR every edge


def test_local_tuples_wait_for_room_in_another_task_and_never_for_the_source_itself():
    from squall.worker.acking import AckTree

    inbound, bolt = _inbound()
    tuples = [Tuple("s", 2, "default", ("w",), (n,)) for n in range(3)]
    inbound.deliver_local({1: tuples[:2]}, {}, 2, threading.Event())  # fills the queue
    assert not bolt.inbox.has_room()
    inbound.deliver_local({1: tuples[2:]}, {}, 1, threading.Event())  # task 1 to itself
    inbound.deliver_local({}, {1: [AckTree(1, 5, 6)]}, 2, threading.Event())  # never waits
    taken = held_until_taken(
        bolt, lambda stopping: inbound.deliver_local({1: tuples[:1]}, {}, 2, stopping)
    )
    assert taken[0] == AckTree(1, 5, 6)  # protocol messages first
    assert [t.values for t in taken[1:]] == [(0,), (1,), (2,)]
    assert [t.values for t in bolt.inbox.take(100, 0)] == [(0,)]
