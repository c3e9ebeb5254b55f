"""Backpressure decisions: which tasks are congested, when a worker tells its peers, how a
sender reads their statuses, and the status on the wire."""

import msgpack
import pyarrow as pa
import pytest

from squall.worker.backpressure import (
    STALE_CHECKS,
    BackpressureStatus,
    RemoteCongestion,
    StatusSchedule,
    congested_tasks,
    task_load,
)
from squall.worker.codec import STATUS_MAGIC, CodecError, _frame, decode, encode_status


def test_congested_tasks_are_the_full_and_the_parked():
    assert congested_tasks([3], [5, 3]) == frozenset({3, 5})
    assert congested_tasks([], []) == frozenset()


def test_a_status_goes_out_on_change_and_every_interval_while_congested():
    s = StatusSchedule(interval=0.05)
    assert not s.due(frozenset(), 0.0)  # nothing to say, nothing said
    assert s.due(frozenset({1}), 0.0)  # became congested
    assert not s.due(frozenset({1}), 0.04)
    assert s.due(frozenset({1}), 0.05)  # renewed while congested
    assert s.due(frozenset({1, 2}), 0.06)  # changed
    assert s.due(frozenset(), 0.07)  # cleared: said once
    assert not s.due(frozenset(), 1.0)


def test_a_worker_sharing_its_loads_sends_its_status_every_interval_congested_or_not():
    s = StatusSchedule(interval=0.05, always=True)
    assert s.due(frozenset(), 0.0)  # the first: its loads
    assert not s.due(frozenset(), 0.04)
    assert s.due(frozenset(), 0.05)
    assert s.due(frozenset({1}), 0.06)  # a change goes out at once still


def test_a_tasks_load_is_its_queues_fill_plus_its_workers_busy_share():
    assert task_load(0.0, 0.0) == 0.0
    assert task_load(0.05, 1.0) == 1.05  # a saturated thread, short queues
    assert task_load(1.0, 1.0) == 2.0
    assert task_load(1.6, 1.0) == 2.0  # past its capacity: full, and no more (the wire's most)


def test_remote_loads_are_the_latest_statuses_and_go_stale():
    r = RemoteCongestion(interval=0.05)
    assert r.load(4, 0.0) is None  # not heard
    r.update(BackpressureStatus("h:1", frozenset(), ((4, 0.5), (5, 1.0))), 0.0)
    assert r.load(4, 0.01) == 0.5 and r.load(5, 0.01) == 1.0 and r.load(6, 0.01) is None
    assert r.by_worker == {}  # nothing congested: a flush has nothing to look at
    r.update(BackpressureStatus("h:1", frozenset({4}), ((4, 1.9),)), 0.02)
    assert r.load(4, 0.03) == 1.9 and r.load(5, 0.03) is None and r.congested(4, 0.03)
    r.update(BackpressureStatus("h:1", frozenset()), 0.04)  # no loads said: the last stay
    assert r.load(4, 0.05) == 1.9 and not r.congested(4, 0.05)
    assert r.load(4, 0.02 + 0.05 * STALE_CHECKS + 0.001) is None and r.loads == {}


def test_remote_statuses_replace_each_other_and_go_stale():
    r = RemoteCongestion(interval=0.05)
    r.update(BackpressureStatus("h:1", frozenset({4, 5})), 0.0)
    r.update(BackpressureStatus("h:2", frozenset({6})), 0.0)
    assert r.congested(4, 0.01) and r.congested(6, 0.01) and not r.congested(7, 0.01)
    r.update(BackpressureStatus("h:1", frozenset({5})), 0.02)
    assert not r.congested(4, 0.03) and r.congested(5, 0.03)
    r.update(BackpressureStatus("h:1", frozenset()), 0.04)
    assert not r.congested(5, 0.05)
    limit = 0.05 * STALE_CHECKS
    assert r.congested(6, limit) and not r.congested(6, limit + 0.001)
    assert r.by_worker == {}


def test_a_status_round_trips_and_a_malformed_one_is_refused():
    status = BackpressureStatus("127.0.0.1:6700", frozenset({1, 9}))
    assert decode(encode_status(status)) == [status]
    loaded = BackpressureStatus("h:1", frozenset(), ((1, 0.25), (9, 2.0)))
    assert decode(encode_status(loaded)) == [loaded]
    for body in (
        ["w", [1]],  # not three parts
        {"worker": "w"},
        ["", [1], []],  # no worker
        ["w" * 301, [1], []],
        [7, [1], []],
        ["w", [-1], []],
        ["w", [None], []],
        ["w", [True], []],
        ["w", "1", []],
        ["w", [], [[1, 0.5, 2]]],
        ["w", [], [[-1, 0.5]]],
        ["w", [], [[True, 0.5]]],
        ["w", [], [[1, 2.5]]],  # past the most a load can be
        ["w", [], [[1, -0.1]]],
        ["w", [], [[1, float("nan")]]],
        ["w", [], [[1, "0.5"]]],
        ["w", [], {"1": 0.5}],
    ):
        with pytest.raises(CodecError):
            decode(STATUS_MAGIC + msgpack.packb(body))
    with pytest.raises(CodecError):
        decode(STATUS_MAGIC + b"\xc1")  # not MessagePack
    arrow = _frame(pa.table({"task": pa.array([1], pa.int32())}), {"control": "backpressure"})
    with pytest.raises(CodecError):  # the Arrow status of before: no longer spoken
        decode(arrow)


def test_parking_holds_data_for_a_full_task_in_order_and_never_holds_acks():
    from squall.worker.delivery import TupleDelivery
    from squall.worker.parking import Parking

    full, delivered = {1}, []
    parking = Parking(delivered.append, lambda task: task in full)
    data = [TupleDelivery(t, "s", 9, "default", (n,)) for n, t in enumerate((1, 2, 1))]
    ack = TupleDelivery(1, "__system", 0, "__ack_ack", (5, 6))
    parking.arrived([*data, ack])
    assert delivered == [[data[1], ack]] and parking.parked == {1: [data[0], data[2]]}
    assert parking.congested([1, 2]) == frozenset({1})
    full.clear()
    later = TupleDelivery(1, "s", 9, "default", (7,))
    parking.arrived([later])  # behind what is parked, though the task has room now
    assert parking.parked == {1: [data[0], data[2], later]}
    parking.retry()
    assert delivered[-1] == [data[0], data[2], later] and parking.parked == {}
    assert parking.congested([1, 2]) == frozenset()


def test_a_flush_waits_while_the_transfer_queue_is_at_its_limit():
    """topology.transfer.buffer.size: a spout must not outrun its own worker's sender (its
    tuples would pile up there, where no receiver's backpressure sees them)."""
    import threading

    from squall.worker.sender import Sender

    sender = Sender(None, None, None, 0, 0, 0.0, threading.Event(), set, limit=2)
    sender.put({("h", 1): ["a"]})
    assert not sender.full()
    sender.put({("h", 1): ["b"]})
    assert sender.full()  # what a spout on a shared thread looks at (its flushes never wait)
    flushed = threading.Event()
    flusher = threading.Thread(
        target=lambda: (sender.wait_for_room(threading.Event()), flushed.set()), daemon=True
    )
    flusher.start()
    assert not flushed.wait(0.2)  # at the limit: the flush waits
    assert len(sender.outbox.take()) == 2  # the sender thread took both puts
    assert flushed.wait(5)
    stopped = threading.Event()
    stopped.set()
    sender.put({("h", 1): ["c", "d"]})
    sender.wait_for_room(stopped)  # a stopping flusher never waits
