"""A transport on the worker's shared thread (Transport.share), over real ZeroMQ on loopback:
nothing is sent before the thread pumps (which gathers a send's worth or the flush interval),
nothing read or delivered before it drains, both in order; its idle poll ends when a message
arrives or another thread puts; a peer that takes nothing never blocks it."""

import logging
import os
import threading
import time

import pytest

from squall.local import wait_for
from squall.thrift_api import DEFAULT_STREAM
from squall.worker import sender as sender_module
from squall.worker.acking import AckTree
from squall.worker.backpressure import BackpressureStatus
from squall.worker.delivery import TupleDelivery
from squall.worker.sender import NOT_DUE
from squall.worker.transport import (
    ALONE_READ_EVERY,
    NOT_HEARD,
    READ_EVERY,
    Transport,
    TransportSettings,
)
from squall.worker.wakeup import FdWake
from squall.zk.server import free_port
from tests.unit.receiving_doubles import receiving

from .test_wakeup import readable


def fields_of(component: str, stream: str) -> tuple[str, ...]:
    return ("n",)


class Shared:
    """A transport shared with this (the test's) thread, as a worker's group shares it."""

    def __init__(self, port: int, received: list, wake: FdWake | None = None) -> None:
        self.wake = wake or FdWake()
        self.transport = Transport(
            TransportSettings("127.0.0.1", port, 2**16),
            receiving(
                lambda items, stopping: received.extend(items), fields_of, full=lambda task: False
            ),
        )
        self.transport.share(self.wake, threading.current_thread())
        self.transport.start()


@pytest.fixture
def pair():
    received: list = []
    port = free_port()
    receiver, sender = Shared(port, received), Shared(free_port(), [])
    sender.transport.route({1: ("127.0.0.1", port)}, set())
    yield receiver, sender, received
    sender.transport.close()
    receiver.transport.close()


def idles_until_woken(transport: Transport) -> None:
    """The shared thread's idle poll returns (in a thread: a poll that never ends fails the
    wait, not the whole run)."""
    idle = threading.Thread(target=transport.idle, args=(60,), daemon=True)
    idle.start()
    wait_for(lambda: not idle.is_alive(), 10, "the idle poll to end")


def test_sends_wait_for_the_pump_and_arrivals_for_the_drain(pair):
    receiver, sender, received = pair
    assert sender.transport.threads == []  # neither a sender thread nor a receive thread
    tuples = [TupleDelivery(1, "numbers", 0, DEFAULT_STREAM, (n,)) for n in range(100)]
    sender.transport.send_many([*tuples[:50], AckTree(1, 5, 6), *tuples[50:]], None)
    assert not sender.transport.outbox.empty()
    sender.transport.pump()
    assert sender.transport.outbox.empty()
    idles_until_woken(receiver.transport)  # by the message
    assert receiver.transport.receiver.ready()
    assert received == []  # nothing read off the shared thread
    receiver.transport.drain()
    assert [d for d in received if type(d) is TupleDelivery] == tuples
    assert [d for d in received if type(d) is AckTree] == [AckTree(1, 5, 6)]
    assert not receiver.transport.receiver.ready()


def test_the_pump_gathers_a_sends_worth_or_until_the_oldest_has_waited(pair):
    """A frame's cost is mostly fixed, and rounds come thousands of times a second: the pump
    sends once gather_at deliveries are in, or the oldest has waited gather_secs (a control
    item at once), and says how soon it is due."""
    receiver, sender, received = pair
    pump, outbox = sender.transport.pump, sender.transport.outbox
    assert pump() == NOT_DUE  # connects to the peer (route's control item)
    sender.transport.sender.gather_at = 10
    sender.transport.sender.gather_secs = 3600.0
    tuples = [TupleDelivery(1, "numbers", 0, DEFAULT_STREAM, (n,)) for n in range(12)]
    sender.transport.send_many(tuples[:9], None)
    assert 3500 < pump() <= 3600 and not outbox.empty()  # gathering: nothing sent
    sender.transport.send_many(tuples[9:10], None)
    assert pump() == NOT_DUE and outbox.empty()  # ten: sent
    sender.transport.send_many(tuples[10:11], None)
    outbox.put(BackpressureStatus("me", frozenset({3})))
    assert pump() == NOT_DUE and outbox.empty()  # a status goes at once, and with it the tuple
    sender.transport.sender.gather_secs = 1.0
    sender.transport.send_many(tuples[11:], None)
    assert 0 < pump() <= 1.0
    wait_for(lambda: pump() == NOT_DUE, 10, "the oldest delivery to have waited a second")
    wait_for(lambda: drained(receiver.transport, received) == tuples, 10, "what was sent")


def test_closing_sends_what_the_pump_gathered():
    received: list = []
    port = free_port()
    receiver = Shared(port, received)
    try:
        sender = Shared(free_port(), [])
        try:
            sender.transport.route({1: ("127.0.0.1", port)}, set())
            sender.transport.pump()  # connects to the peer (route's control item)
            sender.transport.sender.gather_secs = 3600.0
            tuples = [TupleDelivery(1, "numbers", 0, DEFAULT_STREAM, (n,)) for n in range(3)]
            sender.transport.send_many(tuples, None)
            assert sender.transport.pump() != NOT_DUE and not sender.transport.outbox.empty()
        finally:
            sender.transport.close()
        wait_for(lambda: drained(receiver.transport, received) == tuples, 10, "the last sends")
    finally:
        receiver.transport.close()


def drained(transport: Transport, received: list) -> list:
    """What a drain of the shared thread's transport took in, and everything before it."""
    transport.drain()
    return received


@pytest.mark.parametrize("unknown_task", [False, True])
def test_a_flush_goes_to_the_local_tasks_and_to_each_peer_in_order(unknown_task, caplog):
    """send_many splits an executor's flush: its local deliveries to this worker's queues,
    the rest a list per peer, in the flush's order (the codec sends protocol messages in
    frames of their own: in order among themselves). With a task that has no address it
    goes the slow way: that delivery logged and dropped, the others as ever."""
    ports = (free_port(), free_port())
    got: tuple[list, list] = ([], [])
    receivers = [Shared(port, received) for port, received in zip(ports, got, strict=True)]
    local: list = []
    sender = Shared(free_port(), local)
    try:
        one, two = (("127.0.0.1", port) for port in ports)
        sender.transport.route({1: one, 2: two, 3: one}, {7})
        sender.transport.pump()  # connects to the peers (route's control item)
        targets = [1, 7, 2, 3, 1, 7, 2, 2]
        flush = [
            TupleDelivery(t, "numbers", 0, DEFAULT_STREAM, (n,)) for n, t in enumerate(targets)
        ]
        flush[3:3] = [AckTree(2, 5, 6), AckTree(1, 7, 8), AckTree(2, 9, 10)]
        if unknown_task:
            flush.insert(5, TupleDelivery(9, "numbers", 0, DEFAULT_STREAM, (99,)))
        sender.transport.send_many(flush, None)
        assert local == [d for d in flush if d[0] == 7]
        sender.transport.sender.pump(force=True)
        for receiver, received, tasks in zip(receivers, got, ({1, 3}, {2}), strict=True):
            wanted = [d for d in flush if d[0] in tasks]
            count = len(wanted)
            wait_for(
                lambda r=receiver, g=received, n=count: len(drained(r.transport, g)) == n,
                10,
                "each peer's deliveries",
            )
            for kind in (TupleDelivery, AckTree):
                assert [d for d in received if type(d) is kind] == [
                    d for d in wanted if type(d) is kind
                ]
        assert ("no address for task 9" in caplog.text) == unknown_task
    finally:
        sender.transport.close()
        for receiver in receivers:
            receiver.transport.close()


def test_a_flush_waits_while_a_peers_task_it_sends_data_to_is_congested():
    """A task of either peer congested (its worker's status) holds an executor's flush
    until that worker says it has room; a flush of protocol messages alone never waits."""
    sender = Shared(free_port(), [])
    try:
        one, two = ("127.0.0.1", free_port()), ("127.0.0.1", free_port())
        sender.transport.route({1: one, 2: two}, set())
        remote = sender.transport.remote
        remote.max_age = 3600.0  # as if the peer kept saying so (a status goes stale)
        remote.update(BackpressureStatus("peer-two", frozenset({2}), ()), time.monotonic())
        stopping, done = threading.Event(), threading.Event()
        sender.transport.send_many([AckTree(2, 5, 6)], stopping)  # never waits
        flush = [
            TupleDelivery(1, "numbers", 0, DEFAULT_STREAM, (1,)),
            TupleDelivery(2, "numbers", 0, DEFAULT_STREAM, (2,)),
        ]
        flusher = threading.Thread(
            target=lambda: (sender.transport.send_many(flush, stopping), done.set()),
            daemon=True,
        )
        flusher.start()
        assert not done.wait(0.3)  # task 2, on the second peer, is congested
        remote.update(BackpressureStatus("peer-two", frozenset(), ()), time.monotonic())
        assert done.wait(10)
    finally:
        stopping.set()
        sender.transport.close()


def test_a_put_from_another_thread_wakes_the_shared_thread(pair):
    _, sender, _ = pair
    sender.transport.send_many([AckTree(1, 5, 6)], None)  # from the shared thread: no wake
    assert not sender.wake.is_set()
    other = threading.Thread(target=sender.transport.send_many, args=([AckTree(1, 7, 8)], None))
    other.start()
    other.join(10)
    assert sender.wake.is_set()
    idles_until_woken(sender.transport)
    sender.wake.clear()
    assert not sender.wake.is_set() and not sender.wake.wait(0)


def test_a_peer_that_takes_nothing_never_blocks_the_shared_thread(monkeypatch, caplog):
    monkeypatch.setattr(sender_module, "SEND_HWM", 2)
    nobody = free_port()  # nothing listens there
    sender = Shared(free_port(), [])
    try:
        sender.transport.route({1: ("127.0.0.1", nobody)}, set())
        with caplog.at_level(logging.WARNING, "squall.worker.transport"):
            for n in range(20):
                sender.transport.send_many([AckTree(1, n, n)], None)
                sender.transport.pump()  # returns: a blocking send would hang the test here
            sender.transport.outbox.put(BackpressureStatus("me", frozenset({3})))
            sender.transport.pump()  # a status to it neither
        assert "takes nothing" in caplog.text
    finally:
        sender.transport.close()


def test_closing_while_the_shared_thread_is_busy_leaves_its_sockets_and_returns(caplog):
    release = threading.Event()
    busy = threading.Thread(target=release.wait, args=(30,), daemon=True)
    busy.start()
    port = free_port()
    transport = Transport(
        TransportSettings("127.0.0.1", port, 2**16),
        receiving(print, fields_of),
    )
    transport.share(FdWake(), busy)  # stalled in a task's call, say
    transport.start()
    try:
        transport.route({1: ("127.0.0.1", free_port())}, set())
        transport.send_many([AckTree(1, 5, 6)], None)
        with caplog.at_level(logging.WARNING, "squall.worker.transport"):
            transport.close()  # neither sends from this thread nor waits for the context
        assert "the shared thread is busy" in caplog.text
        assert not transport.receiver.pull.closed  # the busy thread reads it
    finally:
        release.set()
        busy.join(10)
        transport.sender.close_sockets()  # what the busy thread would have closed
        transport.receiver.close()
        transport.ctx.term()


def test_a_drain_reads_a_bounded_number_of_messages(pair):
    """A fast peer must not keep the shared thread reading: each drain reads at most
    messages_per_drain messages, the rest wait for the next rounds, in order."""
    receiver, sender, received = pair
    receiver.transport.messages_per_drain = 1
    tuples = [TupleDelivery(1, "numbers", 0, DEFAULT_STREAM, (n,)) for n in range(5)]
    for delivery in tuples:  # a message each
        sender.transport.send_many([delivery], None)
        sender.transport.pump()
    for n in range(1, len(tuples) + 1):
        wait_for(receiver.transport.receiver.ready, 10, "a message")
        receiver.transport.drain()  # at the bound: the next drain looks again at once
        assert received == tuples[:n]


def test_only_the_wakes_own_fd_marks_it_for_reading():
    """An idle ended by a message leaves the wake's fd unread (a read of an empty fd is a
    failing system call per idle); one ended by the fd marks it, so the next clear reads it
    (else the fd stays readable and every poll returns at once)."""
    marked = []

    class Marking(FdWake):
        def polled(self) -> None:
            marked.append(True)
            super().polled()

    port = free_port()
    wake = Marking()
    receiver = Shared(port, [], wake).transport
    sender = Shared(free_port(), [])
    try:
        sender.transport.route({1: ("127.0.0.1", port)}, set())
        sender.transport.send_many([TupleDelivery(1, "numbers", 0, DEFAULT_STREAM, (1,))], None)
        sender.transport.pump()
        idles_until_woken(receiver)  # by the message
        assert marked == []
        os.eventfd_write(wake.fileno(), 1)  # a setter's late write
        idles_until_woken(receiver)
        assert marked == [True]
        wake.clear()
        assert not readable(wake)
    finally:
        sender.transport.close()
        receiver.close()


def test_a_busy_thread_looks_at_its_socket_every_read_every_seconds(pair):
    """A look is a system call and rounds come thousands of times a second: a drain soon
    after a look that found nothing does not look again; after an idle wait it does."""
    receiver, sender, received = pair
    receiver.transport.read_every = 3600.0
    receiver.transport.drain()  # looks, finds nothing: the next look in an hour
    sender.transport.send_many([TupleDelivery(1, "numbers", 0, DEFAULT_STREAM, (1,))], None)
    sender.transport.pump()
    wait_for(receiver.transport.receiver.ready, 10, "the message")
    receiver.transport.drain()
    assert received == []
    receiver.transport.idle(0)  # as the shared thread does when its round found nothing
    receiver.transport.drain()
    assert len(received) == 1


def test_a_worker_without_peers_looks_at_its_socket_less_often(pair):
    """Only a stale peer or a stranger sends to the topology's only worker (and its idle poll
    still wakes on a message): a busy one looks every ALONE_READ_EVERY, not every
    READ_EVERY; once the assignment gives it a peer, every READ_EVERY again."""
    receiver, sender, received = pair
    receiver.transport.route({1: ("127.0.0.1", 1), 2: ("127.0.0.1", 1)}, {1, 2})
    assert receiver.transport.read_every == ALONE_READ_EVERY > READ_EVERY
    assert sender.transport.read_every == READ_EVERY  # the pair's sender has a peer
    receiver.transport.route({1: ("127.0.0.1", 1), 2: ("127.0.0.1", 2)}, {1})
    assert receiver.transport.read_every == READ_EVERY


def test_the_busy_share_is_measured_over_the_interval_loads_are_sent_at():
    """Each status a worker sends carries a busy share of its own (busy_share.py): its
    window is topology.backpressure.check.millis, whatever that is."""
    for check_secs in (0.05, 0.2):
        transport = Transport(
            TransportSettings("127.0.0.1", free_port(), 2**16, check_secs=check_secs),
            receiving(print, fields_of),
        )
        try:
            assert transport.busy.window == transport.schedule.interval == check_secs
        finally:
            transport.close()


def test_a_transport_that_never_started_closes_without_raising():
    """A worker whose component failed to load closes a transport whose threads never ran;
    joining them raised RuntimeError, and that crash was the worker's reported last lines."""
    port = free_port()
    transport = Transport(
        TransportSettings("127.0.0.1", port, 2**16),
        receiving(print, fields_of),
    )
    transport.route({1: ("127.0.0.1", free_port())}, set())
    transport.close()  # returns: no join of an unstarted thread, no context left waiting
    assert transport.receiver.pull.closed
    assert transport.ctx.closed


def test_a_worker_tells_its_peers_its_tasks_loads_and_their_shuffles_read_them():
    """Load-aware messaging on: each worker's status carries its tasks' loads (queue fill
    plus the shared thread's busy share) every check interval; a peer's task_load reads
    them, and says NOT_HEARD before any came."""
    ports = free_port(), free_port()
    routes = {1: ("127.0.0.1", ports[0]), 2: ("127.0.0.1", ports[1])}
    fills = {1: 0.25, 2: 0.0}
    transports = []
    try:
        for port, task in zip(ports, (1, 2), strict=True):
            t = Transport(
                TransportSettings("127.0.0.1", port, 2**16, share_load=True),
                receiving(lambda items, _: None, fields_of, full=lambda t: False, fill=fills.get),
            )
            transports.append(t)
            t.share(FdWake(), threading.current_thread())
            t.start()
            t.route(routes, {task})
            t.pump()  # connects to the peer (route's control item)
        a, b = transports
        assert b.task_load(1) == NOT_HEARD
        a.drain()  # its first status is due at once
        a.pump()
        wait_for(lambda: b.drain() is not None and b.task_load(1) != NOT_HEARD, 10, "a's loads")
        assert b.task_load(1) == pytest.approx(0.25)  # a's thread: not measured yet
        local = a.task_load(1)
        assert local == pytest.approx(0.25 + a.busy.share)  # its own fill and busy share
    finally:
        for t in transports:
            t.close()


def test_sockets_to_addresses_no_task_has_any_more_are_closed_once_routes_change(pair):
    """A worker keeps no socket to a worker gone (ZeroMQ would reconnect to it for as long as
    it lives), and what was queued for it before the routes changed is sent first."""
    receiver, sender, received = pair
    transport = sender.transport
    old = transport.addresses[1]
    transport.pump()  # the route's control item: connected to the peer
    assert set(transport.sender.sockets) == {old}
    old_socket = transport.sender.sockets[old]
    tup = TupleDelivery(1, "numbers", 0, DEFAULT_STREAM, (1,))
    transport.send_many([tup], None)
    moved = ("127.0.0.1", free_port())  # task 1 moved to a worker that is not up yet
    transport.route({1: moved}, set())
    transport.sender.pump(force=True)
    assert set(transport.sender.sockets) == {moved}
    assert old_socket.closed
    wait_for(receiver.transport.receiver.ready, 10, "the tuple queued before the move")
    receiver.transport.drain()
    assert received == [tup]
    transport.route({1: moved, 2: old}, set())  # a task at the old address again
    transport.sender.pump(force=True)
    assert set(transport.sender.sockets) == {moved, old}
