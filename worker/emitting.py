"""The emitting half of an executor: routing an emit and turning the task machine's Sends
into deliveries, buffered by its `Outbox` (outbox.py).

Kept apart from executors.py (the thread, its liveness and its error reports) so that each
reads in one sitting; `Emitter` is a base class of `Executor` and is never used alone. It
expects, set by `Executor.__init__`: component, context, streams, io, stats, sampler, and
`_call`, besides what Outbox expects.

A tuple for a task of the same worker (`TaskIO.local_tasks`) is made here as the `Tuple` its
receiver takes, once: no TupleDelivery that the receiving side would take apart again.
"""

from __future__ import annotations

import logging
from collections.abc import Sequence
from typing import Any

import pyarrow as pa

from squall.event_sampling import EVENT_LOGGER, Sampler
from squall.tables import as_table

from .acking import CallAck, CallFail, Send
from .delivery import Delivery, TableDelivery, TupleDelivery
from .outbox import _PROTOCOL, Instruction, Outbox
from .task_stats import TaskStats

eventlog = logging.getLogger(EVENT_LOGGER)


class _Collector:
    """What a component emits through: the executor's own emit methods, bound once (a
    Python call less per emit), and nothing else of the executor."""

    def __init__(self, executor: Emitter) -> None:
        self.emit = executor.emit
        self.emit_batch = executor.emit_batch


class Emitter(Outbox):
    """Emits for one task (see the module docstring)."""

    component: Any  # the user's Bolt or Spout (None for an acker), as the kind of task needs
    streams: dict[str, tuple[str, ...]]
    component_id: str  # the context's, read per emit without an attribute lookup on it
    task_id: int
    stats: TaskStats
    sampler: Sampler

    def _call(self, what: str, fn: Any, *args: Any) -> bool:  # pragma: no cover
        raise NotImplementedError

    def _fields(self, stream: str) -> tuple[str, ...]:
        fields = self.streams.get(stream)
        if fields is None:
            raise ValueError(f"{self.context.component_id} emits on undeclared stream {stream!r}")
        return fields

    def emit(
        self, values: Sequence[Any], stream: str, direct: int | None, msg_id: Any
    ) -> list[int]:
        """Route and send (buffered); the tasks it went to, as Storm's emit returns them.
        Every emit of every task passes here: one immutable payload shared by all targets,
        each Send of the machine made its delivery by the outbox."""
        payload = values if type(values) is tuple else tuple(values)
        fields = self.streams.get(stream)
        if fields is None or len(payload) != len(fields):
            fields = self._check_emit(payload, stream)
        name, task = self.component_id, self.task_id
        targets = self.io.targets(name, task, stream, payload, direct)
        instructions = self._emitted(tuple(targets), msg_id)
        self._buffer_emit(instructions, name, task, stream, fields, payload)
        if self.sampler.percentage > 0 and self.sampler():  # no call while debug is off
            self._event(stream, msg_id, list(payload))
        stats = self.stats
        stats.emitted[stream] += 1
        stats.transferred[stream] += len(targets)
        return targets

    def _check_emit(self, values: Sequence[Any], stream: str) -> tuple[str, ...]:
        """The stream's fields, or ValueError when it is undeclared or `values` do not fit."""
        fields = self._fields(stream)
        if len(values) != len(fields):
            raise ValueError(
                f"{self.context.component_id} emits {len(values)} values on stream "
                f"{stream!r}, which declares {len(fields)} fields {list(fields)}"
            )
        return fields

    def emit_batch(self, columns: Any, stream: str, direct: int | None, msg_id: Any) -> None:
        name = self.component_id
        table = as_table(columns, self._fields(stream), f"{name} on stream {stream!r}")
        if not table.num_rows:
            return
        parts = self.io.split(name, self.task_id, stream, table, direct)
        if msg_id is not None and table.num_rows > 1:
            self._batch_tree(msg_id, table.num_rows)  # before its verdict, which may be now
        self._send_parts(stream, parts, msg_id)
        if self.sampler.percentage > 0:
            for row in table.to_pylist():
                if self.sampler():
                    self._event(stream, msg_id, list(row.values()))
        self.stats.emitted[stream] += table.num_rows
        self.stats.transferred[stream] += sum(part.num_rows for _, part in parts)

    def _event(self, stream: str, msg_id: Any, values: list[Any]) -> None:
        """One sampled tuple in the worker log (Storm's event logger's fields)."""
        name, task = self.component_id, self.task_id
        eventlog.info("%s %d %s %r %r", name, task, stream, msg_id, values)

    def _send_parts(self, stream: str, parts: Sequence[tuple[int, Any]], msg_id: Any) -> None:
        """Ask the task's machine how to send `parts` (one Send per part, in order, plus
        protocol messages) and do it."""
        payloads = iter(parts)
        for instruction in self._emitted(tuple(target for target, _ in parts), msg_id):
            if isinstance(instruction, Send):
                target, payload = next(payloads)
                assert instruction.target == target, (instruction, target)
                self._send(instruction, stream, payload)
            else:
                self.carry_out(instruction)

    def _emitted(self, targets: tuple[int, ...], msg_id: Any) -> Sequence[Instruction]:
        """The machine's instructions for an emit to `targets`: untracked unless overridden."""
        return [Send(target) for target in targets]

    def _batch_tree(self, msg_id: Any, rows: int) -> None:
        """A tracked batch of `rows` tuples was emitted as tree `msg_id` (a spout keeps it, to
        count its verdict in tuples: spout_executor.py)."""

    def _tree_rows(self, msg_id: Any) -> int:
        """How many tuples the verdict on tree `msg_id` settles."""
        return 1

    def _send(self, send: Send, stream: str, payload: Any) -> None:
        name, task = self.component_id, self.task_id
        if isinstance(payload, pa.Table):
            delivery: Delivery = TableDelivery(
                send.target, name, task, stream, payload, send.roots, send.ids
            )
        else:
            delivery = TupleDelivery(send.target, name, task, stream, payload, send.roots, send.ids)
        self._buffer(delivery)

    def carry_out(self, instruction: Instruction) -> None:
        """Do what a machine decided, other than sending an emitted payload: a protocol
        message is buffered as it is (the transport turns it into a tuple only for the
        wire), a verdict calls the spout."""
        if type(instruction) in _PROTOCOL:
            self._buffer_protocol((instruction,))  # type: ignore[arg-type]
            return
        match instruction:
            case CallAck(msg_id):
                self.stats.acked += self._tree_rows(msg_id)
                self._call("ack", self.component.ack, msg_id)  # type: ignore[union-attr]
            case CallFail(msg_id):
                self.stats.failed += self._tree_rows(msg_id)
                self._call("fail", self.component.fail, msg_id)  # type: ignore[union-attr]
            case _:
                raise TypeError(f"no executor carries out {instruction!r}")
