"""An executor's outbox: what its task emitted and its protocol messages, buffered until a
flush hands them to the worker.

The per-tuple path is batched as Storm 2 batches it: what a task emits (and its acks) is
gathered and handed over at the end of each batch of inputs, once
`topology.producer.batch.size` deliveries are held, and at the latest after
`topology.batch.flush.interval.millis`. Tuples and protocol messages (acks, inits, verdicts)
for tasks of the same worker (`TaskIO.local_tasks`) wait per target and go to
`TaskIO.deliver_local`: no routing per message on the way (with the Tuples the emitter makes
for them, a sixth of a one-worker topology's CPU). Everything else (remote tuples and
messages, tables) goes to `send_many` as one list. A TaskIO without `send_many` (a test
driving an executor by hand) gets each delivery at once from `send`.

`Outbox` is a base class of `Emitter`, never used alone; `Executor.__init__` sets what it
expects: context, io, batch_size, flush_interval, stopping, flush_waits, _send_many,
_deliver_local, _here, _out, _local_out, _local_protocol, _held and _out_since.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable, Sequence
from typing import Any, cast

from squall.components import TaskContext, Tuple

from .acking import ProtocolMessage
from .delivery import Delivery
from .task_seam import TaskIO


class Outbox:
    """Buffers and flushes for one task (see the module docstring)."""

    context: TaskContext
    io: TaskIO
    batch_size: int
    flush_interval: float
    stopping: threading.Event
    flush_waits: bool  # False on a shared thread (executor_group.py): a flush never waits
    _send_many: Callable[[list[Delivery | ProtocolMessage], threading.Event | None], None] | None
    _deliver_local: (
        Callable[[dict[int, list[Tuple]], dict[int, list[Any]], int, threading.Event | None], None]
        | None
    )
    _here: frozenset[int]  # the tasks of this worker
    _out: list[Delivery | ProtocolMessage]  # for send_many
    _local_out: dict[int, list[Tuple]]  # Tuples for tasks of this worker, per target
    _local_protocol: dict[int, list[ProtocolMessage]]  # messages for them, per target
    _held: int  # how many in all three
    _out_since: float  # when the oldest of them was buffered (monotonic)

    def _buffer(self, delivery: Delivery | ProtocolMessage) -> None:
        if self._send_many is None:  # then carry_out sends messages as tuples: a Delivery
            self.io.send(cast(Delivery, delivery))
            return
        if not self._held:
            self._out_since = time.monotonic()
        self._out.append(delivery)
        self._held += 1
        if self._held >= self.batch_size:
            self.flush()

    def _buffer_protocol(self, messages: Sequence[ProtocolMessage]) -> None:
        """`_buffer` for several protocol messages at once (a TaskIO with `send_many` only):
        those for tasks of this worker wait per target, as local Tuples do."""
        if not messages:
            return
        if not self._held:
            self._out_since = time.monotonic()
        here, out, local = self._here, self._out, self._local_protocol
        for message in messages:
            target = message[0]
            if target in here:
                queued = local.get(target)
                if queued is None:
                    local[target] = [message]
                else:
                    queued.append(message)
            else:
                out.append(message)
        self._held += len(messages)
        if self._held >= self.batch_size:
            self.flush()

    def flush(self) -> None:
        """Hand what is buffered to the worker (waits while backpressured): the Tuples made
        for this worker's tasks, then the rest as one list."""
        if self._held:
            local, self._local_out = self._local_out, {}
            protocol, self._local_protocol = self._local_protocol, {}
            out, self._out = self._out, []
            self._held = 0
            stopping = self.stopping if self.flush_waits else None  # None: never waits
            if local or protocol:
                self._deliver_local(local, protocol, self.context.task_id, stopping)  # type: ignore[misc]
            if out:
                self._send_many(out, stopping)  # type: ignore[misc]

    def flush_due(self, now: float) -> None:
        """Flush if the oldest buffered delivery is older than the flush interval."""
        if self._held and now - self._out_since >= self.flush_interval:
            self.flush()
