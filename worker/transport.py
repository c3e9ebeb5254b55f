"""Tuples between worker processes over ZeroMQ: where each delivery goes.

Tuples for tasks in the same worker skip the network; the rest go to the sender (sender.py),
which splits its frames to stay under worker.max.message.bytes. What peers send comes in
through the receiver (receiver.py: the bound PULL socket, bounded reads, CURVE) and goes to
the tasks' queues here, or notes a peer's backpressure status.

On a worker whose tasks take turns on one shared thread (executor_group.py) that thread also
reads and decodes what arrived before each round and sends what its tasks emitted after it
(`share`), and idles in one poll over the receiving socket and its wake-up (wakeup.py): there
is no sender thread and no receive thread. Handing every message between three threads that
take turns on the GIL cost two workers more CPU than the messages themselves, and a receive
thread took the GIL from the tasks at each of its wake-ups (bench/RESULTS.md, "Per-tuple
path, two workers: load-aware shuffle and the transport on the shared thread" and "... the
shared thread reads its socket"). Its sends gather, as a sender thread's do, until a send's
worth is in or the oldest has waited topology.batch.flush.interval.millis: a frame's cost is
mostly fixed, and a send after every round made frames of a few tuples ("... the shared
thread's sends gather"). What the shared thread has
not read yet waits in ZeroMQ's queue (RCVHWM messages; past that a peer's sender thread waits
and a peer's shared thread drops and logs, sender.py), not in an unbounded queue here.

Backpressure (backpressure.py): the receiving thread (the receive thread, or the shared
thread) never blocks on a task's queue. Data for a task whose queue is full is parked, in
order, and retried (parking.py); while any task is congested this worker sends its congested
set to its peers as a control frame (on change and every check interval). An executor
flushing data to a congested remote task waits (checking its stop flag) until the task has
room; protocol messages never wait.

Load (locality.py's load-aware shuffle, unless topology.disable.loadaware.messaging): the
same status frame carries each of this worker's tasks' load (backpressure.task_load: its
queue's fill plus the shared thread's busy share, busy_share.py), sent every check interval,
so a worker's shuffle weighs another worker's tasks by how busy that worker is (`task_load`),
as Storm's workers send each other their tasks' loads.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable
from dataclasses import dataclass
from itertools import chain, compress
from operator import itemgetter, not_
from typing import Any, cast

import zmq

from squall.security.topology_keys import TopologyKeys

from .acking import PROTOCOL_TYPES, SYSTEM_STREAMS, ProtocolMessage
from .backpressure import BackpressureStatus, RemoteCongestion, StatusSchedule, task_load
from .busy_share import BusyShare
from .codec import FieldsOf
from .compact_frames import CompactRows
from .delivery import Delivery
from .parking import Parking
from .protocol_frames import grouped_by
from .receiver import RECEIVE_WAIT, Receiver, log
from .sender import CONNECT_PEERS, Address, Sender
from .wakeup import FdWake, poll_millis

PROTOCOL = frozenset(PROTOCOL_TYPES)
_TARGET = itemgetter(0)
MESSAGES_PER_DRAIN = 64  # a fast peer must not keep the shared thread reading
# Seconds between a busy shared thread's looks at its socket: a look is a system call
# (3.6 us, ZMQ_EVENTS); rounds come thousands of times a second, messages hundreds.
READ_EVERY = 0.0005
# ... and a worker without peers (the topology's only one): nothing but a stale peer of an
# earlier assignment or a stranger sends to it, and its idle poll still wakes on a message;
# at READ_EVERY its looks were a few % of a single worker's CPU (bench/RESULTS.md, "Where a
# tuple's CPU goes")
ALONE_READ_EVERY = 0.05
NOT_HEARD = 1.0  # the load of a remote task whose worker said none (Storm's NOT_CONNECTED)


@dataclass(frozen=True)
class TransportSettings:
    """What a worker's transport is built from: where it binds, and the conf's limits
    (`from_conf`); `keys`: the topology's CURVE keypair (security on), None speaks plain
    ZeroMQ."""

    address: str
    port: int
    max_message_bytes: int
    keys: TopologyKeys | None = None
    check_secs: float = 0.05  # topology.backpressure.check.millis
    gather_secs: float = 0.0  # topology.batch.flush.interval.millis
    transfer_limit: int = 0  # topology.transfer.buffer.size (0: none)
    share_load: bool = False  # send the tasks' loads (load-aware messaging on)

    @staticmethod
    def from_conf(
        conf: dict[str, Any], address: str, port: int, keys: TopologyKeys | None
    ) -> TransportSettings:
        return TransportSettings(
            address,
            port,
            int(conf["worker.max.message.bytes"]),
            keys,
            conf.get("topology.backpressure.check.millis", 50) / 1000,
            conf.get("topology.batch.flush.interval.millis", 1) / 1000,
            int(conf.get("topology.transfer.buffer.size", 0)),
            not conf.get("topology.disable.loadaware.messaging", False),
        )


@dataclass(frozen=True)
class Receiving:
    """Where what arrives goes (Inbound's methods). `deliver_many`: takes a list for this
    worker's tasks at once (an executor's flush may wait in it while a local queue is full,
    the receiving thread never does); `full`: whether a local task's queue is full (None: no
    backpressure); `deliver_rows`: takes a compact frame's rows as they came, or says
    False; `fill`: how full a local task's receive queue is, 0 to 1 (its load);
    `deliver_protocol`: takes a protocol frame's messages (never parked, never waits)."""

    deliver_many: Callable[[list[Delivery], threading.Event | None], None]
    fields_of: FieldsOf
    full: Callable[[int], bool] | None
    deliver_rows: Callable[[CompactRows], bool]
    fill: Callable[[int], float]
    deliver_protocol: Callable[[list[ProtocolMessage]], None]


class Transport:
    def __init__(self, settings: TransportSettings, receiving: Receiving):
        address, port, keys = settings.address, settings.port, settings.keys
        max_message_bytes, check_secs = settings.max_message_bytes, settings.check_secs
        gather_secs, transfer_limit = settings.gather_secs, settings.transfer_limit
        deliver_many, fields_of = receiving.deliver_many, receiving.fields_of
        full, deliver_rows = receiving.full, receiving.deliver_rows
        self.deliver_protocol = receiving.deliver_protocol
        self.ctx = zmq.Context()
        try:
            self.receiver = Receiver(self.ctx, address, port, max_message_bytes, keys)
        except BaseException:  # the port is taken, say: nothing of this transport stays open
            self.ctx.destroy(linger=0)
            raise
        self.deliver_many = deliver_many
        self.deliver_rows = deliver_rows
        self.full = full  # whether a local task's queue is full (None: no backpressure)
        self.check_secs = check_secs
        self.gather_secs = gather_secs  # how long the sender gathers deliveries per send
        self.worker_id = f"{address}:{port}"
        self.parking = Parking(lambda ds: deliver_many(ds, None), full) if full else None
        self.fill = receiving.fill
        self.share_load = settings.share_load
        self.schedule = StatusSchedule(check_secs, always=settings.share_load)
        self.busy = BusyShare(check_secs)  # the shared thread's (0 without one), a status each
        self.remote = RemoteCongestion(check_secs)
        self.fields_of = fields_of
        self.addresses: dict[int, Address] = {}
        self.local: set[int] = set()
        self.stopping = threading.Event()
        self.sender = Sender(
            self.ctx,
            keys,
            fields_of,
            max_message_bytes,
            self.receiver.frame_bytes,
            gather_secs,
            self.stopping,
            self._peers,
            transfer_limit if full else 0,
        )
        self.outbox = self.sender.outbox
        self.shared = False  # whether the worker's shared thread receives and sends
        self.messages_per_drain = MESSAGES_PER_DRAIN
        self.read_every = READ_EVERY
        self.read_at = 0.0  # when drain next looks at the socket
        self.poller: zmq.Poller | None = None  # the shared thread's idle poll
        self.wake: FdWake | None = None  # what other threads set to end it
        self.threads = [
            threading.Thread(target=self._receive, name="transport-recv", daemon=True),
            threading.Thread(target=self.sender.run, name="transport-send", daemon=True),
        ]

    def start(self) -> None:
        for t in self.threads:
            t.start()

    def share(self, wake: FdWake, thread: threading.Thread) -> None:
        """Receive and send on `thread`, the worker's shared thread, which calls `drain` and
        `pump` each round and `idle` between rounds (before `start`); a put from another
        thread sets `wake`."""
        self.shared = True
        self.wake = wake
        self.settle_at = 0.0  # when drain next retries parked data and looks at congestion
        self.sender.share(wake, thread)
        self.poller = zmq.Poller()
        self.poller.register(self.receiver.pull, zmq.POLLIN)
        self.poller.register(wake, zmq.POLLIN)
        self.threads = []  # neither a sender thread nor a receive thread

    def idle(self, timeout: float) -> None:
        """On the shared thread between rounds: wait up to `timeout` seconds for a message
        or a wake-up; the next drain looks at the socket."""
        self.read_at = 0.0
        wake = self.wake
        assert wake is not None and self.poller is not None
        if wake.is_set():  # set since the round began: a round now
            return
        fd = wake.fileno()
        began = time.monotonic()
        for ready, _ in self.poller.poll(poll_millis(timeout)):
            if ready is wake or ready == fd:  # pyzmq gives a registered object's fd back
                wake.polled()
        self.busy.waited(began, time.monotonic())

    def drain(self) -> float:
        """On the shared thread: take in the messages that arrived (looking at the socket
        after an idle wait, else every read_every seconds); the seconds until this must
        run again (parked data is retried, a congested worker tells its peers)."""
        now = time.monotonic()
        if now >= self.read_at:
            receiver, read = self.receiver, 0
            while read < self.messages_per_drain and receiver.ready():
                self._take(receiver.read_message())
                read += 1
            # at the bound more may wait: the next round looks again
            self.read_at = now if read == self.messages_per_drain else now + self.read_every
        if self.parking is not None and self.parking.parked:  # retry and tell peers soon
            self.settle_at = min(self.settle_at, now + self.check_secs / 5)
        if now >= self.settle_at:  # not every round: rounds come thousands of times a second
            self.settle_at = now + min(self._settle(), self.check_secs)
        return self.settle_at - now

    def pump(self) -> float:
        """On the shared thread: send what the tasks emitted when due; the seconds until
        this must run again."""
        return self.sender.pump()

    def route(self, addresses: dict[int, Address], local: set[int]) -> None:
        """Where every task of the topology runs now (called when the assignment changes)."""
        self.addresses = dict(addresses)
        self.local = set(local)
        self.read_every = READ_EVERY if self._peers() else ALONE_READ_EVERY
        self.read_at = 0.0  # a worker that gains peers looks now, not after its lonely wait
        self.sender.outbox.put(CONNECT_PEERS)

    def send_many(self, deliveries: list[Any], stopping: threading.Event | None) -> None:
        """An executor's flush: local deliveries (and protocol messages, as they are) to their
        queues in one call, the remote ones to the sender thread as one item, a list per peer
        (protocol messages as they are too: the codec packs them in frames of their own)."""
        here, addresses = self.local, self.addresses
        targets = list(map(_TARGET, deliveries))  # d[0]: every delivery's and message's
        found = list(map(addresses.get, targets))
        if None in found:  # a task without an address: the slow way, saying which
            local, remote = self._split_by_hand(deliveries)
        else:  # in C: no Python step per delivery
            peers = cast("list[Address]", found)
            is_local = list(map(here.__contains__, targets))
            if True in is_local:
                far = list(map(not_, is_local))
                local = list(compress(deliveries, is_local))
                remote = grouped_by(list(compress(deliveries, far)), list(compress(peers, far)))
            else:  # all for other workers (a spout's flush, say, in a worker of its own)
                local, remote = [], grouped_by(deliveries, peers)
        if local:
            self.deliver_many(local, stopping)
        if remote and stopping is not None and self.full is not None:
            self._wait_for_room(remote, stopping)
            self.sender.wait_for_room(stopping)
        if remote:
            self.sender.put(remote)

    def _split_by_hand(self, deliveries: list[Any]) -> tuple[list[Any], dict[Address, list[Any]]]:
        """`deliveries` for tasks here, and per peer the rest; those for a task without an
        address are logged and dropped."""
        here, addresses = self.local, self.addresses
        local: list[Any] = []
        remote: dict[Address, list[Any]] = {}
        for d in deliveries:
            target = d[0]
            if target in here:
                local.append(d)
                continue
            address = addresses.get(target)
            if address is None:
                log.warning("no address for task %s; tuple dropped", target)
            else:
                remote.setdefault(address, []).append(d)
        return local, remote

    def _wait_for_room(self, remote: dict[Address, list[Any]], stopping: threading.Event) -> None:
        """Hold an executor's flush while a remote task it sends data to (`remote`: its
        deliveries per peer) is congested."""
        if not self.remote.by_worker:  # no peer said any task is congested (most flushes)
            return
        protocol = PROTOCOL
        targets = {
            d[0]
            for d in chain.from_iterable(remote.values())
            if type(d) not in protocol and d.stream not in SYSTEM_STREAMS
        }
        while not stopping.is_set() and any(self.congested(t) for t in targets):
            stopping.wait(self.check_secs / 10)

    def _receive(self) -> None:
        """The receive thread (no shared thread): it decodes, and retries parked data."""
        self.receiver.run(self.stopping, self._take, self._settle)

    def _take(self, message: list[bytes]) -> None:
        """Hand over what a message's frames hold (parking data for a full task, noting a
        peer's backpressure status)."""
        for decoded in self.receiver.decoded(message):
            if isinstance(decoded, CompactRows):
                if self._took_rows(decoded):
                    continue
                items: list[Any] = decoded.deliveries()
            elif decoded and type(decoded[0]) in PROTOCOL:  # a protocol frame: one kind
                self.deliver_protocol(decoded)
                continue
            else:
                items = decoded
            if len(items) == 1 and isinstance(items[0], BackpressureStatus):
                self.remote.update(items[0], time.monotonic())
            elif self.parking is not None:
                self.parking.arrived(items)
            else:
                self.deliver_many(items, None)

    def _took_rows(self, rows: CompactRows) -> bool:
        """Hand a compact frame's rows over as they came, unless a task of them has data
        parked or a full queue (then they go the way of every delivery, to be parked)."""
        if self.parking is not None and self.parking.held(set(rows.targets)):
            return False
        return self.deliver_rows(rows)

    def _settle(self) -> float:
        """Retry parked data and send this worker's status (congestion, loads) when due; the
        seconds until the next look."""
        parking = self.parking
        if parking is None and not self.share_load:
            return RECEIVE_WAIT
        congested: frozenset[int] = frozenset()
        if parking is not None:
            parking.retry()
            congested = parking.congested(self.local)
        now = time.monotonic()
        if self.schedule.due(congested, now):
            loads = self.loads(now) if self.share_load else ()
            status = BackpressureStatus(self.worker_id, congested, loads)
            self.outbox.put(status)  # type: ignore[arg-type]
        if parking is not None and parking.parked:
            return self.check_secs / 5
        return self.check_secs if self.share_load else RECEIVE_WAIT

    def loads(self, now: float) -> tuple[tuple[int, float], ...]:
        """Each local task's load (backpressure.task_load), as this worker's status says."""
        busy, fill = self._busy_share(now), self.fill
        return tuple((task, task_load(fill(task), busy)) for task in sorted(self.local))

    def _busy_share(self, now: float) -> float:
        """The shared thread's busy share (0 without one: threads of their own are not
        measured)."""
        return self.busy.roll(now) if self.shared else 0.0

    def task_load(self, task: int) -> float:
        """How loaded `task` is (locality.py's load; backpressure.task_load): a local task's
        own, a remote one's as its worker's last status said (NOT_HEARD while none did); a
        congested task (or a full transfer queue) counts as 2, the most."""
        now = time.monotonic()
        if task in self.local:
            return task_load(self.fill(task), self._busy_share(now))
        if self.sender.full() or self.remote.congested(task, now):
            return task_load(1.0, 1.0)
        load = self.remote.load(task, now)
        return NOT_HEARD if load is None else load

    def congested(self, task: int) -> bool:
        """Whether `task` cannot take more now: a full local queue, or for a remote task
        this worker's full transfer queue or its worker's latest status."""
        if task in self.local:
            return self.full is not None and self.full(task)
        return self.sender.full() or self.remote.congested(task, time.monotonic())

    def _peers(self) -> set[Address]:
        return {a for t, a in self.addresses.items() if t not in self.local}

    def close(self) -> None:
        """After the executors stopped: the last sends, then the sockets. A shared thread
        still busy (a task stalled in a call) keeps its sockets: ZeroMQ sockets must not be
        used from two threads, and the context cannot end while they are open."""
        if not self.shared:  # a sender thread and a receive thread of its own
            # A worker that failed before `start` (a component that did not load) closes a
            # transport whose threads never ran: joining one raises RuntimeError, and that
            # second failure hid the first from the supervisor's report.
            started = [t for t in self.threads if t.ident is not None]
            self.outbox.put(None)
            if self.threads[1] in started:
                self.threads[1].join(5)
            else:  # its sockets are closed here, or the context's term would wait on them
                self.sender.close_sockets()
            busy = _busy(self.threads[1])
            self.stopping.set()
            if self.threads[0] in started:
                self.threads[0].join(2)
            self.receiver.close()
        else:
            self.stopping.set()
            busy = _busy(self.sender.thread)  # type: ignore[arg-type]
            if busy:
                log.warning("the shared thread is busy: its last sends are dropped")
            else:
                self.sender.pump(force=True)
                self.sender.close_sockets()
                self.receiver.close()
        if not busy:  # term waits for every socket: a busy thread's are still open
            self.ctx.term()


def _busy(thread: threading.Thread) -> bool:
    """Whether another thread still runs (and may use its sockets)."""
    return thread.is_alive() and thread is not threading.current_thread()
