"""The receive side of a worker's transport: its PULL socket, read with bounds a stranger
cannot pass, and frames decoded into what they carry.

The socket is bound on the address of the host its supervisor registered with
(storm.local.hostname; bind_address.py), never on every interface: peers reach it through that
host name, which is what the assignment's node_host holds. With the topology's keys (security
on) it speaks CURVE and only the topology's own workers get in (curve.py). A frame larger than
worker.max.message.bytes is refused by ZeroMQ before it is read (the peer that sent it is
disconnected; the others are not), so one hostile frame cannot grow the worker. A message is
read a part at a time, and one with more parts or bytes than any worker sends is dropped
unkept; a frame that does not decode is dropped too (framing.py, codec.py). Both are logged at
most once per MALFORMED_LOG_SECS, so that a peer sending junk cannot fill the worker's log.

Where what arrived goes (tasks' queues, parking, a peer's congestion status) is the
transport's business (transport.py): this module only turns bytes into items.
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Callable, Iterator
from typing import Any

import zmq

from squall.security.topology_keys import TopologyKeys

from . import curve
from .bind_address import endpoint
from .codec import CodecError, decode_received
from .compact_frames import CompactRows
from .framing import MAX_PARTS, Throttle, frame_limit, over_bound

log = logging.getLogger("squall.worker.transport")  # one logger for both sides

MALFORMED_LOG_SECS = 10.0
RECEIVE_WAIT = 0.2  # seconds between looks at parked data and congestion while nothing arrives
# pyzmq's constants are enum members, whose & runs in Python: `ready` runs thousands of times a
# second, with plain ints in C
_EVENTS, _POLLIN = int(zmq.EVENTS), int(zmq.POLLIN)


class Receiver:
    def __init__(
        self,
        ctx: zmq.Context,
        address: str,
        port: int,
        max_message_bytes: int,
        keys: TopologyKeys | None,
    ) -> None:
        self.pull = ctx.socket(zmq.PULL)
        self.auth: Any = None
        try:
            self.pull.setsockopt(zmq.RCVHWM, 100_000)
            self.pull.setsockopt(zmq.MAXMSGSIZE, max_message_bytes)
            if ":" in address:
                self.pull.setsockopt(zmq.IPV6, 1)
            self.auth = curve.serve(ctx, self.pull, keys) if keys else None
            self.pull.bind(endpoint(address, port))
        except BaseException:  # the port is taken, say: nothing of this receiver stays open
            self.close()
            raise
        self.frame_bytes = frame_limit(max_message_bytes)
        self.malformed = Throttle(MALFORMED_LOG_SECS)
        self.oversized = Throttle(MALFORMED_LOG_SECS)

    def run(
        self,
        stopping: threading.Event,
        take: Callable[[list[bytes]], None],
        settle: Callable[[], float] | None,
    ) -> None:
        """The receive thread: each message to `take`; `settle` (if any) after each look,
        returning how long the next look may wait for a message."""
        poller = zmq.Poller()
        poller.register(self.pull, zmq.POLLIN)
        wait = RECEIVE_WAIT
        while not stopping.is_set():
            if poller.poll(int(wait * 1000) + 1):
                take(self.read_message())
            if settle is not None:
                wait = settle()

    def ready(self) -> bool:
        """Whether a message waits to be read (read_message returns at once)."""
        return bool(self.pull.get(_EVENTS) & _POLLIN)

    def read_message(self) -> list[bytes]:
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
            self.oversized.warn(
                log,
                "dropped %d message(s) over %d parts or %d bytes; the latest: %d parts, %d bytes",
                MAX_PARTS,
                self.frame_bytes,
                parts,
                total,
            )
        return frames

    def decoded(self, message: list[bytes]) -> Iterator[CompactRows | list[Any]]:
        """The items of each frame of `message` that decodes (a compact frame's as its
        rows: codec.decode_received); the others are logged and dropped."""
        for frame in message:
            try:
                yield decode_received(frame)
            except CodecError as exc:
                self.malformed.warn(
                    log, "dropped %d malformed frame(s); the latest, %d bytes: %s", len(frame), exc
                )

    def close(self) -> None:
        self.pull.close(linger=0)
        if self.auth:
            self.auth.stop()
