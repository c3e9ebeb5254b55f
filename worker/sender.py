"""The sending side of the transport: one thread owns one PUSH socket per remote worker
(ZeroMQ sockets are not thread-safe) and sends what has queued up for a peer as one multipart
message of frames (codec.py: compact tuple frames, protocol frames, Arrow tables), split to
stay under worker.max.message.bytes. Executors hand it deliveries through the outbox
(sender_outbox.py). ZeroMQ reconnects by itself when a peer worker restarts."""

from __future__ import annotations

import contextlib
import logging
import threading
import time
from collections import defaultdict
from collections.abc import Callable
from typing import Any

import zmq

from squall.security.topology_keys import TopologyKeys

from . import curve
from .backpressure import BackpressureStatus
from .codec import FieldsOf, encode_bounded, encode_status
from .delivery import Delivery, TableDelivery, TupleDelivery
from .framing import MAX_PARTS, Throttle, pack
from .sender_outbox import IDLE, SendQueue

log = logging.getLogger("squall.worker.transport")

Address = tuple[str, int]
MAX_DELIVERIES_PER_SEND = MAX_PARTS
UNSENT_LOG_SECS = 10.0
NOT_DUE = 60.0  # what pump returns with nothing left to send
SEND_HWM = 100_000  # messages ZeroMQ queues for a peer before a send would wait
_DATA = (TupleDelivery, TableDelivery)


def _gather(queued: dict[Address, list[Any]], item: dict[Address, list[Any]]) -> int:
    """Add an outbox item's deliveries to their peers' lists, in order; how many."""
    count = 0
    for address, deliveries in item.items():
        queued[address] += deliveries
        count += len(deliveries)
    return count


class ConnectPeers:
    """Connect to every peer now (the routes changed), before any tuple needs it: a first
    backpressure status must not wait for a connection and its CURVE handshake (a spout
    emits tens of thousands of tuples meanwhile)."""


CONNECT_PEERS = ConnectPeers()


class Sender:
    def __init__(
        self,
        ctx: zmq.Context,
        keys: TopologyKeys | None,
        fields_of: FieldsOf,
        max_message_bytes: int,
        frame_bytes: int,
        gather_secs: float,
        stopping: threading.Event,
        peers: Callable[[], set[Address]],
        limit: int = 0,
    ):
        """`peers`: the addresses of the topology's other workers now (for status frames).
        `limit`: how many deliveries may wait for this thread before a flush that brings
        more waits (topology.transfer.buffer.size; 0: no bound). Without it a spout outruns
        its own sender: its tuples pile up here, unseen by any receiver's backpressure."""
        self.ctx = ctx
        self.keys = keys
        self.fields_of = fields_of
        self.max_message_bytes = max_message_bytes
        self.frame_bytes = frame_bytes
        self.gather_secs = gather_secs  # how long the sender gathers deliveries per send
        self.stopping = stopping
        self.peers = peers
        self.outbox = SendQueue(limit)
        self.limit = limit
        # how many deliveries make the shared thread's pump send (no more than the limit, at
        # which spouts pause and flushes wait: a pump must not gather past it)
        self.gather_at = min(limit, MAX_DELIVERIES_PER_SEND) if limit else MAX_DELIVERIES_PER_SEND
        self.sockets: dict[Address, zmq.Socket] = {}  # one per peer, used by one thread only
        self.routes_changed = False  # sockets to workers gone are closed after the next send
        self.thread: threading.Thread | None = None  # the shared thread that sends, if any
        self.send_flags = 0  # the sender thread may wait for a peer at its high-water mark
        self.unsent = Throttle(UNSENT_LOG_SECS)

    def share(self, wake: threading.Event, thread: threading.Thread) -> None:
        """Send from `thread` (the worker's shared thread, calling `pump` each round)
        instead of a thread of its own; a put from any other thread wakes it."""
        self.outbox.wake_for_others(wake, thread)
        self.thread = thread
        self.send_flags = zmq.NOBLOCK  # a peer that takes nothing must not stop every task

    def pump(self, force: bool = False) -> float:
        """Send what the outbox holds (the shared thread, each round) once it holds
        `gather_at` deliveries, or a control item, or its oldest has waited the flush
        interval (or with `force`); the seconds until it is due again."""
        if self.outbox.empty():
            return NOT_DUE
        if not force:
            wait = self.outbox.gathering(self.gather_at, self.gather_secs)
            if wait > 0:
                return wait
        queued: dict[Address, list[Delivery]] = defaultdict(list)
        for item in self.outbox.take(IDLE, 0.0):
            if item is not None and not self.control(item):
                _gather(queued, item)
        self._send(queued)
        return NOT_DUE

    def close_sockets(self) -> None:
        for sock in self.sockets.values():
            sock.close()

    def put(self, items: dict[Address, list[Delivery]]) -> None:
        """Deliveries for the sender thread, a list per peer (counted against the limit)."""
        self.outbox.put(items, sum(map(len, items.values())))

    def wait_for_room(self, stopping: threading.Event) -> None:
        """Hold a flush while the outbox is at its limit (checking the flusher's stop)."""
        self.outbox.wait_for_room(stopping, self.stopping)

    def full(self) -> bool:
        """Whether the outbox is at its limit (a spout on a shared thread, whose flushes
        never wait, pauses instead)."""
        return self.outbox.full()

    def run(self) -> None:
        """The sender thread: until the outbox yields None (close), send what queued up,
        gathering for up to the flush interval (or MAX_DELIVERIES_PER_SEND) after the first
        delivery: a frame has a fixed cost, so frames of a few tuples made two workers
        slower than one."""
        closing = False
        while not closing and not self.stopping.is_set():
            queued: dict[Address, list[Delivery]] = defaultdict(list)
            count = 0
            items = self.outbox.take()
            deadline = time.monotonic() + self.gather_secs
            while True:
                for item in items:
                    if item is None:
                        closing = True
                        break
                    if not self.control(item):
                        count += _gather(queued, item)
                if closing or not count or count >= MAX_DELIVERIES_PER_SEND:
                    break
                if time.monotonic() >= deadline:
                    break
                items = self.outbox.take(MAX_DELIVERIES_PER_SEND - count, deadline)
            self._send(queued)
        self.close_sockets()

    def _send(self, queued: dict[Address, list[Delivery]]) -> None:
        """What was gathered, one multipart message (or a few) per peer."""
        for address, deliveries in queued.items():
            sock = self.socket(address)
            frames, too_large = encode_bounded(deliveries, self.fields_of, self.frame_bytes)
            for d in too_large:
                log.error(
                    "a %s to task %d does not fit worker.max.message.bytes (%d) and "
                    "cannot be sent; it is dropped (its tree fails on timeout)",
                    f"tuple from {d.component}" if isinstance(d, _DATA) else type(d).__name__,
                    d[0],
                    self.max_message_bytes,
                )
            for message in pack(frames, self.frame_bytes):
                try:
                    sock.send_multipart(message, self.send_flags)
                except zmq.Again:  # SNDHWM messages queued for a peer that takes none
                    self.unsent.warn(
                        log,
                        "dropped %d message(s) for %s:%d: it takes nothing (down, or "
                        "stalled); their tuple trees fail on timeout and are replayed",
                        *address,
                    )
        if self.routes_changed:
            self.close_stale()

    def control(self, item: Any) -> bool:
        """Carry out a control item (a status to send, peers to connect); False for data."""
        if isinstance(item, BackpressureStatus):
            self.send_status(item)
        elif item is CONNECT_PEERS:
            self.routes_changed = True
            for address in self.peers():
                self.socket(address)
        else:
            return False
        return True

    def close_stale(self) -> None:
        """Close the sockets to addresses where no task of the topology runs any more (a
        worker that moved or went), after what was queued for them before the routes changed
        was sent: ZeroMQ would keep reconnecting each for as long as the worker lives, a file
        descriptor and a connection attempt every reconnect interval, rebalance after
        rebalance."""
        self.routes_changed = False
        peers = self.peers()
        for address in [a for a in self.sockets if a not in peers]:
            self.sockets.pop(address).close()  # its LINGER: what was just sent may still go

    def socket(self, address: Address) -> zmq.Socket:
        sock = self.sockets.get(address)
        if sock is None:
            sock = self.ctx.socket(zmq.PUSH)
            sock.setsockopt(zmq.SNDHWM, SEND_HWM)
            sock.setsockopt(zmq.LINGER, 2000)
            if self.keys:
                curve.connect_as_peer(sock, self.keys)
            sock.connect(f"tcp://{address[0]}:{address[1]}")
            self.sockets[address] = sock
        return sock

    def send_status(self, status: BackpressureStatus) -> None:
        """This worker's congested tasks, to every other worker of the topology."""
        frame = encode_status(status)
        for address in self.peers():
            with contextlib.suppress(zmq.Again):  # a peer that takes nothing: the next renewal
                self.socket(address).send_multipart([frame], self.send_flags)
