"""Tuples between worker processes over ZeroMQ.

Each worker binds a PULL socket on its slot port, on the address of the host its supervisor
registered with (storm.local.hostname), never on every interface: peers reach it through
that host name, which is what the assignment's node_host holds. A frame larger than
worker.max.message.bytes is refused by ZeroMQ before it is read (the peer that sent it is
disconnected; the others are not), so one hostile frame cannot grow the worker; the sender
splits its frames to stay under the same bound. Tuples for tasks in the same worker skip
the network; the rest go to a sender thread that owns one PUSH socket per remote worker
(ZeroMQ sockets are not thread-safe) and sends what has queued up for a peer as one multipart
message of frames, each an Arrow record batch (codec.py). ZeroMQ reconnects by itself when a
peer worker restarts. With the topology's keys (security on) every socket speaks CURVE and
only the topology's own workers get in (curve.py). A message is read a part at a time and one
with more parts or bytes than any worker sends is dropped unkept (framing.py).

Backpressure (backpressure.py): the receive thread never blocks on a task's queue. Data for
a task whose queue is full is parked, in order, and retried (parking.py); while any task is
congested this worker sends its congested set to its peers as a control frame (on change and every
check interval). An executor flushing data to a congested remote task waits (checking its
stop flag) until the task has room; protocol messages never wait.
"""

from __future__ import annotations

import ipaddress
import logging
import queue
import socket
import threading
import time
from collections import defaultdict
from collections.abc import Callable
from typing import Any

import zmq

from squall.topology_keys import TopologyKeys

from . import curve
from .acking import PROTOCOL_TYPES, SYSTEM_STREAMS, message_delivery
from .backpressure import BackpressureStatus, RemoteCongestion
from .codec import CodecError, FieldsOf, decode, encode_bounded, encode_status
from .delivery import Delivery
from .framing import MAX_PARTS, Throttle, frame_limit, over_bound, pack
from .parking import Parking

log = logging.getLogger("squall.worker.transport")

Address = tuple[str, int]
MAX_DELIVERIES_PER_SEND = MAX_PARTS
MALFORMED_LOG_SECS = 10.0
Resolver = Callable[..., list[tuple[Any, ...]]]
PROTOCOL = frozenset(PROTOCOL_TYPES)


class BindError(ValueError):
    """The worker's host has no address this machine can bind."""


def bind_address(host: str, resolve: Resolver = socket.getaddrinfo) -> str:
    """The IP address to bind for `host` (ZeroMQ binds an address or an interface, never a
    name): its first IPv4 address, else its first IPv6 one."""
    if not host:
        raise BindError("a worker needs its supervisor's host to bind to")
    try:
        infos = resolve(host, None, 0, socket.SOCK_STREAM)
    except (OSError, UnicodeError) as exc:
        raise BindError(f"cannot resolve the worker's host {host!r}: {exc}") from exc
    for family in (socket.AF_INET, socket.AF_INET6):
        for info in infos:
            if info[0] == family:
                return str(info[4][0])
    raise BindError(f"the worker's host {host!r} has no IPv4 or IPv6 address")


def loopback_surprise(host: str, address: str) -> bool:
    """Whether a host *name* other than localhost resolved to a loopback address (Debian's
    /etc/hosts maps the machine's name to 127.0.1.1): workers on other machines then cannot
    reach this one, and storm.local.hostname should name a reachable address."""
    try:
        ipaddress.ip_address(host)
        return False  # an address given literally is meant as given
    except ValueError:
        pass
    return host != "localhost" and ipaddress.ip_address(address).is_loopback


def endpoint(address: str, port: int) -> str:
    """The ZeroMQ TCP endpoint of an IP address (IPv6 ones in brackets)."""
    return f"tcp://[{address}]:{port}" if ":" in address else f"tcp://{address}:{port}"


class Transport:
    def __init__(
        self,
        address: str,
        port: int,
        deliver: Callable[[Delivery], None],
        fields_of: FieldsOf,
        max_message_bytes: int,
        keys: TopologyKeys | None = None,
        deliver_many: Callable[[list[Delivery], threading.Event | None], None] | None = None,
        full: Callable[[int], bool] | None = None,
        check_secs: float = 0.05,
        gather_secs: float = 0.0,
    ):
        """`keys`: the topology's CURVE keypair (security on); None speaks plain ZeroMQ.
        `deliver_many`: takes a list at once (Inbound's; an executor's flush may wait in it
        while a local queue is full, the receive thread never does)."""
        self.ctx = zmq.Context()
        self.keys = keys
        self.pull = self.ctx.socket(zmq.PULL)
        self.pull.setsockopt(zmq.RCVHWM, 100_000)
        self.pull.setsockopt(zmq.MAXMSGSIZE, max_message_bytes)
        if ":" in address:
            self.pull.setsockopt(zmq.IPV6, 1)
        self.auth = curve.serve(self.ctx, self.pull, keys) if keys else None
        try:
            self.pull.bind(endpoint(address, port))
        except zmq.ZMQError:
            if self.auth:
                self.auth.stop()
            raise
        self.max_message_bytes = max_message_bytes
        self.frame_bytes = frame_limit(max_message_bytes)
        self.deliver = deliver
        self.deliver_many = deliver_many
        self.full = full  # whether a local task's queue is full (None: no backpressure)
        self.check_secs = check_secs
        self.gather_secs = gather_secs  # how long the sender gathers deliveries per send
        self.worker_id = f"{address}:{port}"
        self.parking = (
            Parking(lambda ds: self._deliver_all(ds, None), full, check_secs) if full else None
        )
        self.remote = RemoteCongestion(check_secs)
        self.fields_of = fields_of
        self.outbox: queue.Queue[list[tuple[Address, Delivery]] | None] = queue.Queue()
        self.addresses: dict[int, Address] = {}
        self.local: set[int] = set()
        self.stopping = threading.Event()
        self.malformed = Throttle(MALFORMED_LOG_SECS)
        self.oversized = Throttle(MALFORMED_LOG_SECS)
        self.threads = [
            threading.Thread(target=self._receive, name="transport-recv", daemon=True),
            threading.Thread(target=self._send, name="transport-send", daemon=True),
        ]

    def start(self) -> None:
        for t in self.threads:
            t.start()

    def route(self, addresses: dict[int, Address], local: set[int]) -> None:
        """Where every task of the topology runs now (called when the assignment changes)."""
        self.addresses = dict(addresses)
        self.local = set(local)

    def send(self, delivery: Delivery) -> None:
        if delivery.target in self.local:
            self.deliver(delivery)
            return
        address = self.addresses.get(delivery.target)
        if address is None:
            log.warning("no address for task %s; tuple dropped", delivery.target)
            return
        self.outbox.put([(address, delivery)])

    def send_many(self, deliveries: list[Any], stopping: threading.Event | None) -> None:
        """An executor's flush: local deliveries (and protocol messages, as they are) to their
        queues in one call, the remote ones to the sender thread as one item."""
        local = [d for d in deliveries if d.target in self.local]
        if local:
            self._deliver_all(local, stopping)
        if len(local) == len(deliveries):
            return
        remote: list[tuple[Address, Any]] = []
        for d in deliveries:
            if d.target in self.local:
                continue
            address = self.addresses.get(d.target)
            if address is None:
                log.warning("no address for task %s; tuple dropped", d.target)
            else:
                remote.append((address, message_delivery(d) if type(d) in PROTOCOL else d))
        if remote and stopping is not None and self.full is not None:
            self._wait_for_room([d for _, d in remote], stopping)
        if remote:
            self.outbox.put(remote)

    def _wait_for_room(self, deliveries: list[Delivery], stopping: threading.Event) -> None:
        """Hold an executor's flush while a remote task it sends data to is congested."""
        targets = {d.target for d in deliveries if d.stream not in SYSTEM_STREAMS}
        while not stopping.is_set() and any(self.congested(t) for t in targets):
            stopping.wait(self.check_secs / 10)

    def _deliver_all(self, deliveries: list[Delivery], stopping: threading.Event | None) -> None:
        if self.deliver_many is not None:
            self.deliver_many(deliveries, stopping)
        else:
            for delivery in deliveries:
                self.deliver(delivery)

    def _receive(self) -> None:
        poller = zmq.Poller()
        poller.register(self.pull, zmq.POLLIN)
        while not self.stopping.is_set():
            parked = self.parking is not None and self.parking.parked
            wait_ms = int(self.check_secs * 200) + 1 if parked else 200
            if poller.poll(wait_ms):
                for frame in self._receive_message():
                    try:
                        items = decode(frame)
                    except CodecError as exc:
                        self._malformed(len(frame), exc)
                        continue
                    if len(items) == 1 and isinstance(items[0], BackpressureStatus):
                        self.remote.update(items[0], time.monotonic())
                    elif self.parking is not None:
                        self.parking.arrived(items)  # type: ignore[arg-type]
                    else:
                        self._deliver_all(items, None)  # type: ignore[arg-type]
            if self.parking is not None:
                self.parking.retry()
                due = self.parking.status_due(self.local, time.monotonic())
                if due is not None:
                    self.outbox.put(BackpressureStatus(self.worker_id, due))  # type: ignore[arg-type]

    def congested(self, task: int) -> bool:
        """Whether `task` cannot take more now: a full local queue, or a remote worker's
        latest status says so."""
        if task in self.local:
            return self.full is not None and self.full(task)
        return self.remote.congested(task, time.monotonic())

    def _receive_message(self) -> list[bytes]:
        """One message's frames, read a part at a time (libzmq hands over a message only once
        all of it has arrived). Past MAX_PARTS parts or frame_bytes bytes the rest is read
        and let go, and nothing of it is delivered: no worker sends such a message."""
        frames: list[bytes] = []
        parts = total = 0
        dropped = False
        while True:
            part = self.pull.recv(copy=False)
            parts += 1
            total += len(part)
            if not dropped and over_bound(parts, total, self.frame_bytes):
                dropped, frames = True, []
            if not dropped:
                frames.append(part.bytes)
            if not part.more:
                break
        if dropped:
            count = self.oversized.note(time.monotonic())
            if count:
                log.warning(
                    "dropped %d message(s) over %d parts or %d bytes; the latest: %d parts, "
                    "%d bytes",
                    count,
                    MAX_PARTS,
                    self.frame_bytes,
                    parts,
                    total,
                )
        return frames

    def _malformed(self, size: int, exc: CodecError) -> None:
        """Log dropped frames at most once per MALFORMED_LOG_SECS: a peer sending junk must
        not fill the worker's log."""
        count = self.malformed.note(time.monotonic())
        if count:
            log.warning("dropped %d malformed frame(s); the latest, %d bytes: %s", count, size, exc)

    def _send(self) -> None:
        sockets: dict[Address, zmq.Socket] = {}
        while True:
            item = self.outbox.get()
            if item is None:
                break
            if isinstance(item, BackpressureStatus):
                self._send_status(item, sockets)
                continue
            queued: dict[Address, list[Delivery]] = defaultdict(list)
            for address, delivery in item:
                queued[address].append(delivery)
            count = len(item)
            # gather for up to the flush interval: an Arrow frame has a fixed cost of a few
            # hundred microseconds, so frames of a few tuples made two workers slower than one
            deadline = time.monotonic() + self.gather_secs
            while count < MAX_DELIVERIES_PER_SEND:
                try:
                    item = self.outbox.get(timeout=max(deadline - time.monotonic(), 0))
                except queue.Empty:
                    break
                if item is None:
                    self.stopping.set()
                    break
                if isinstance(item, BackpressureStatus):
                    self._send_status(item, sockets)
                    continue
                for address, delivery in item:
                    queued[address].append(delivery)
                count += len(item)
            for address, deliveries in queued.items():
                sock = self._socket(address, sockets)
                frames, too_large = encode_bounded(deliveries, self.fields_of, self.frame_bytes)
                for d in too_large:
                    log.error(
                        "a tuple from %s to task %d is larger than worker.max.message.bytes "
                        "(%d) and cannot be sent; it is dropped (its tree fails on timeout)",
                        d.component,
                        d.target,
                        self.max_message_bytes,
                    )
                for message in pack(frames, self.frame_bytes):
                    sock.send_multipart(message)
            if self.stopping.is_set():
                break
        for sock in sockets.values():
            sock.close()

    def _socket(self, address: Address, sockets: dict[Address, zmq.Socket]) -> zmq.Socket:
        sock = sockets.get(address)
        if sock is None:
            sock = self.ctx.socket(zmq.PUSH)
            sock.setsockopt(zmq.SNDHWM, 100_000)
            sock.setsockopt(zmq.LINGER, 2000)
            if self.keys:
                curve.connect_as_peer(sock, self.keys)
            sock.connect(f"tcp://{address[0]}:{address[1]}")
            sockets[address] = sock
        return sock

    def _send_status(self, status: BackpressureStatus, sockets: dict[Address, zmq.Socket]) -> None:
        """This worker's congested tasks, to every other worker of the topology."""
        frame = encode_status(status)
        peers = {a for t, a in self.addresses.items() if t not in self.local}
        for address in peers:
            self._socket(address, sockets).send_multipart([frame])

    def close(self) -> None:
        self.outbox.put(None)
        self.threads[1].join(5)
        self.stopping.set()
        self.threads[0].join(2)
        self.pull.close(linger=0)
        if self.auth:
            self.auth.stop()
        self.ctx.term()
