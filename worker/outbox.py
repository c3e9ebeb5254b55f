"""An executor's outbox: what its task emitted and its protocol messages, buffered until a
flush hands them to the worker. All of a task's buffering is here, in one place.

The per-tuple path is batched as Storm 2 batches it: what a task emits (and its acks) is
gathered and handed over at the end of each batch of inputs, once
`topology.producer.batch.size` deliveries are held, and at the latest after
`topology.batch.flush.interval.millis`. Tuples and protocol messages (acks, inits, verdicts)
for tasks of the same worker (`TaskIO.local_tasks`) wait per target and go to
`TaskIO.deliver_local`: no routing per message on the way (with the Tuples the emitter makes
for them, a sixth of a one-worker topology's CPU). Everything else (remote tuples and
messages, tables) goes to `send_many` as one list.

`Outbox` is a base class of `Emitter`, never used alone; `Executor.__init__` sets what it
expects: context, io, batch_size, flush_interval, stopping, flush_waits, _send_many,
_deliver_local, _here, _out, _local_out, _local_protocol, _held and _out_since.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable, Sequence
from typing import Any

from squall.components import TaskContext, Tuple

from .acking import (
    PROTOCOL_TYPES,
    AckTree,
    CallAck,
    CallFail,
    FailTree,
    InitTree,
    ProtocolMessage,
    Send,
    TreeDone,
    TreeFailed,
)
from .delivery import Delivery, TupleDelivery, as_tuple
from .task_seam import TaskIO

_PROTOCOL = frozenset(PROTOCOL_TYPES)
_new = tuple.__new__

# What a task's machine (spout_tracking, anchoring, acker) tells its executor to do
Instruction = Send | InitTree | AckTree | FailTree | TreeDone | TreeFailed | CallAck | CallFail


class Outbox:
    """Buffers and flushes for one task (see the module docstring)."""

    context: TaskContext
    io: TaskIO
    batch_size: int
    flush_interval: float
    stopping: threading.Event
    flush_waits: bool  # False on a shared thread (executor_group.py): a flush never waits
    _send_many: Callable[[list[Delivery | ProtocolMessage], threading.Event | None], None]
    _deliver_local: Callable[
        [dict[int, list[Tuple]], dict[int, list[Any]], int, threading.Event | None], None
    ]
    _here: frozenset[int]  # the tasks of this worker
    _out: list[Delivery | ProtocolMessage]  # for send_many
    _local_out: dict[int, list[Tuple]]  # Tuples for tasks of this worker, per target
    _local_protocol: dict[int, list[ProtocolMessage]]  # messages for them, per target
    _held: int  # how many in all three
    _out_since: float  # when the oldest of them was buffered (monotonic)

    def carry_out(self, instruction: Instruction) -> None:  # pragma: no cover - Emitter's
        raise NotImplementedError

    def _held_more(self, n: int) -> None:
        """`n` more buffered: the flush interval starts with the first, and a full batch
        flushes."""
        if not self._held:
            self._out_since = time.monotonic()
        self._held += n
        if self._held >= self.batch_size:
            self.flush()

    def _buffer(self, delivery: Delivery) -> None:
        """A delivery for `send_many` (a table, or a part `_send_parts` made)."""
        self._out.append(delivery)
        self._held_more(1)

    def _buffer_emit(
        self,
        instructions: Sequence[Instruction],
        name: str,
        task: int,
        stream: str,
        fields: tuple[str, ...],
        payload: tuple,
    ) -> None:
        """What the task's machine said about one emit of `payload`: a delivery per Send (for
        a local target the Tuple its receiver takes, made once, here), protocol messages (an
        init) as they are, anything else carried out."""
        here, local = self._here, self._local_out
        for instruction in instructions:
            if type(instruction) is Send:
                target, roots, ids = instruction
                if target in here:
                    tup = as_tuple(name, task, stream, fields, payload, roots, ids)
                    queued = local.get(target)
                    if queued is None:
                        local[target] = [tup]
                    else:
                        queued.append(tup)
                else:  # TupleDelivery(...) without the namedtuple's Python-level __new__
                    head = (target, name, task, stream, payload, roots, ids)
                    self._out.append(_new(TupleDelivery, head))
            elif type(instruction) in _PROTOCOL:  # an init: counted and flushed there
                self._buffer_protocol((instruction,))  # type: ignore[arg-type]
                local = self._local_out  # in case that flushed
                continue
            else:
                self.carry_out(instruction)
                continue
            # _held_more(1), inline: this runs for every delivery of every emit
            if not self._held:
                self._out_since = time.monotonic()
            self._held += 1
            if self._held >= self.batch_size:  # a full batch flushes here, mid-emit too
                self.flush()
                local = self._local_out

    def _buffer_protocol(self, messages: Sequence[ProtocolMessage]) -> None:
        """Protocol messages (acks, inits, verdicts): those for tasks of this worker wait
        per target, as local Tuples do."""
        if not messages:
            return
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
        # _held_more, inline: this runs for every input of every bolt (its acks)
        if not self._held:
            self._out_since = time.monotonic()
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
                self._deliver_local(local, protocol, self.context.task_id, stopping)
            if out:
                self._send_many(out, stopping)

    def flush_due(self, now: float) -> None:
        """Flush if the oldest buffered delivery is older than the flush interval."""
        if self._held and now - self._out_since >= self.flush_interval:
            self.flush()
