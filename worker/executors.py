"""Executors: the thread that runs one task of a spout, bolt, SparkBolt or acker.

An executor is a thin loop: it calls the user's component, feeds what happens (emits, acker
verdicts, ticks of the clock) to its task's pure decision machine (spout_tracking, anchoring,
acker, micro_batches) and carries out the instructions the machine gives.

The seam to the rest of the worker is `TaskIO` and the executor's `inbox`, nothing else:
no ZooKeeper, no sockets, no subprocesses. To run a topology in one process (squall.testing),
build each task's executor with `executor_factory.make_executor`, give them all one TaskIO
whose `send_many` puts the deliveries, turned into what an inbox holds (`inbox_item`), on
the target executors' inboxes, and call `start()` / `stop()`. An inbox (receive_queue.py)
holds `Tuple` or `Batch` inputs for bolts and protocol messages (`acking.TreeDone`,
`InitTree`, ...) for spouts and ackers.

The per-tuple path is batched as Storm 2 batches it: an executor takes every input waiting in
one wake-up, and what it emits (and its acks) is gathered and handed to `send_many` as one
list at the end of each batch of inputs, once `topology.producer.batch.size` deliveries are
held, and at the latest after `topology.batch.flush.interval.millis`. A TaskIO without
`send_many` (a test driving an executor by hand) gets each delivery at once from `send`.
"""

from __future__ import annotations

import logging
import sys
import threading
import time
import traceback
from collections.abc import Callable, Sequence
from typing import Any, Protocol

import pyarrow as pa

from squall.components import Batch, Component, TaskContext, Tuple
from squall.event_sampling import EVENT_LOGGER, Sampler

from .acking import (
    PROTOCOL_TYPES,
    SYSTEM_STREAMS,
    AckIds,
    AckTree,
    CallAck,
    CallFail,
    FailTree,
    InitTree,
    ProtocolMessage,
    Send,
    TreeDone,
    TreeFailed,
    message_stream,
    stream_message,
)
from .delivery import Delivery, TableDelivery, TupleDelivery
from .micro_batches import rows
from .receive_queue import ReceiveQueue
from .root_cause import root_cause
from .stall import Progress
from .tables import as_table
from .task_stats import TaskStats

log = logging.getLogger("squall.worker")
eventlog = logging.getLogger(EVENT_LOGGER)

Input = Tuple | Batch
InboxItem = Input | ProtocolMessage


class TaskIO(Protocol):
    """What an executor needs from its worker: where an emit goes, the acker tasks, a way
    to send a delivery to any task, and a place to report user-code errors (per task: the
    worker throttles each task's reports)."""

    ackers: tuple[int, ...]

    def targets(
        self, component: str, task: int, stream: str, values: Sequence[Any], direct: int | None
    ) -> list[int]: ...

    def split(
        self, component: str, task: int, stream: str, table: pa.Table, direct: int | None
    ) -> list[tuple[int, pa.Table]]: ...

    def send(self, delivery: Delivery) -> None: ...

    def send_many(
        self, deliveries: list[Delivery | ProtocolMessage], stopping: threading.Event
    ) -> None:
        """Send in order (protocol messages as they are); may wait (until `stopping`) while
        a local target's queue is full."""

    def congested(self, component: str) -> bool:
        """Whether a task `component` emits to has a full queue (a spout then pauses)."""
        return False

    def report_error(self, component: str, task: int, text: str) -> None: ...


def inbox_item(delivery: Delivery, fields: tuple[str, ...]) -> InboxItem:
    """What the target executor's inbox takes for a delivery on a stream with `fields`."""
    if type(delivery) is TupleDelivery and delivery.stream not in SYSTEM_STREAMS:
        return Tuple(
            delivery.component,
            delivery.task,
            delivery.stream,
            fields,
            delivery.values,
            delivery.anchors,
        )
    if isinstance(delivery, TableDelivery):
        return Batch(
            delivery.component,
            delivery.task,
            delivery.stream,
            fields,
            delivery.table,
            delivery.anchors,
        )
    if delivery.stream in SYSTEM_STREAMS:
        return stream_message(delivery.target, delivery.stream, delivery.values)
    head = (delivery.component, delivery.task, delivery.stream, fields)
    return Tuple(*head, delivery.values, delivery.anchors)


class _Collector:
    def __init__(self, executor: Executor) -> None:
        self.executor = executor

    def emit(
        self, values: list[Any], stream: str, direct_task: int | None, msg_id: Any = None
    ) -> list[int]:
        return self.executor.emit(values, stream, direct_task, msg_id)

    def emit_batch(
        self, columns: Any, stream: str, direct_task: int | None, msg_id: Any = None
    ) -> None:
        self.executor.emit_batch(columns, stream, direct_task, msg_id)


_PROTOCOL = frozenset(PROTOCOL_TYPES)
_new = tuple.__new__

Instruction = Send | InitTree | AckTree | FailTree | TreeDone | TreeFailed | CallAck | CallFail


def error_text(exc: BaseException) -> str:
    """An error report: the root cause in one line first (a Java cause without its stack),
    then where in Python it was raised."""
    frames = "".join(traceback.format_tb(exc.__traceback__, limit=-8))
    return f"{root_cause(exc)}\nTraceback (most recent call last):\n{frames}".rstrip("\n")


class Executor:
    ready_on_start = True  # a SparkBolt is ready once its SparkSession is up
    kind = "task"  # what a stall report calls it: spout, bolt, acker

    def __init__(
        self,
        component: Component | None,
        context: TaskContext,
        streams: dict[str, tuple[str, ...]],
        conf: dict[str, Any],
        io: TaskIO,
        new_id: Callable[[], int] | None = None,
    ) -> None:
        self.component = component
        self.context = context
        self.streams = streams
        self.conf = conf
        self.io = io
        self.new_id = new_id if new_id is not None else AckIds()
        self.stats = TaskStats()
        # Storm's debug option: a seeded share of emitted tuples goes to the event log
        self.sampler = Sampler(seed=context.task_id)
        self.inbox = ReceiveQueue(
            conf.get("topology.executor.receive.buffer.size", 32768), rows, weighed=Batch
        )
        self.batch_size = conf.get("topology.producer.batch.size", 1000)
        self.flush_interval = conf.get("topology.batch.flush.interval.millis", 1) / 1000
        self._send_many = getattr(io, "send_many", None)
        self._out: list[Delivery | ProtocolMessage] = []  # emits and acks not yet flushed
        self._out_since = 0.0  # when the oldest of them was buffered (monotonic)
        self.stopping = threading.Event()
        self.active = threading.Event()
        self.timeout = conf["topology.message.timeout.secs"]
        # Liveness, read by the worker's watchdog (stall.py); written only by this thread.
        self.progress_at = time.monotonic()
        self.busy = False
        self.holding = 0  # inputs taken and not yet finished
        self.fatal: str | None = None  # why this task stopped for good (its error report)
        self.thread = threading.Thread(
            target=self._run, name=f"task-{context.task_id}", daemon=True
        )
        if component is not None:
            component.collector = _Collector(self)

    def start(self) -> None:
        self.thread.start()

    def stop(self) -> None:
        self.stopping.set()

    # --- emitting ---

    def _fields(self, stream: str) -> tuple[str, ...]:
        fields = self.streams.get(stream)
        if fields is None:
            raise ValueError(f"{self.context.component_id} emits on undeclared stream {stream!r}")
        return fields

    def emit(self, values: list[Any], stream: str, direct: int | None, msg_id: Any) -> list[int]:
        """Route and send (buffered); the tasks it went to, as Storm's emit returns them.
        Every emit of every task passes here: one immutable payload shared by all targets,
        and each Send of the machine becomes its delivery right here."""
        fields = self.streams.get(stream)
        if fields is None or len(values) != len(fields):
            self._check_emit(values, stream)
        context = self.context
        name, task = context.component_id, context.task_id
        targets = self.io.targets(name, task, stream, values, direct)
        payload = tuple(values)
        instructions = self._emitted(tuple(targets), msg_id)
        if self._send_many is None:
            buffer = self._buffer
            for instruction in instructions:
                if type(instruction) is Send:
                    target, roots, ids = instruction
                    buffer(TupleDelivery(target, name, task, stream, payload, roots, ids))
                else:
                    self.carry_out(instruction)
        else:  # _buffer inline: a delivery per Send, protocol messages (an init) as they are
            out, batch_size = self._out, self.batch_size
            for instruction in instructions:
                if type(instruction) is Send:
                    target, roots, ids = instruction
                    # TupleDelivery(...) without the namedtuple's Python-level __new__
                    item: Delivery | ProtocolMessage = _new(
                        TupleDelivery, (target, name, task, stream, payload, roots, ids)
                    )
                elif type(instruction) in _PROTOCOL:
                    item = instruction  # type: ignore[assignment]
                else:
                    self.carry_out(instruction)
                    continue
                if not out:
                    self._out_since = time.monotonic()
                out.append(item)
                if len(out) >= batch_size:
                    self.flush()
                    out = self._out
        if self.sampler.percentage > 0 and self.sampler():  # no call while debug is off
            self._event(stream, msg_id, values)
        stats = self.stats
        stats.emitted[stream] += 1
        stats.transferred[stream] += len(targets)
        return targets

    def _check_emit(self, values: list[Any], stream: str) -> None:
        fields = self._fields(stream)
        if len(values) != len(fields):
            raise ValueError(
                f"{self.context.component_id} emits {len(values)} values on stream "
                f"{stream!r}, which declares {len(fields)} fields {list(fields)}"
            )

    def emit_batch(self, columns: Any, stream: str, direct: int | None, msg_id: Any) -> None:
        name = self.context.component_id
        table = as_table(columns, self._fields(stream), f"{name} on stream {stream!r}")
        if not table.num_rows:
            return
        parts = self.io.split(name, self.context.task_id, stream, table, direct)
        self._send_parts(stream, parts, msg_id)
        if self.sampler.percentage > 0:
            for row in table.to_pylist():
                if self.sampler():
                    self._event(stream, msg_id, list(row.values()))
        self.stats.emitted[stream] += table.num_rows
        self.stats.transferred[stream] += sum(part.num_rows for _, part in parts)

    def _event(self, stream: str, msg_id: Any, values: list[Any]) -> None:
        """One sampled tuple in the worker log (Storm's event logger's fields)."""
        name, task = self.context.component_id, self.context.task_id
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

    def _emitted(self, targets: tuple[int, ...], msg_id: Any) -> list[Instruction]:
        """The machine's instructions for an emit to `targets`: untracked unless overridden."""
        return [Send(target) for target in targets]

    def _send(self, send: Send, stream: str, payload: Any) -> None:
        name, task = self.context.component_id, self.context.task_id
        if isinstance(payload, pa.Table):
            delivery: Delivery = TableDelivery(
                send.target, name, task, stream, payload, send.roots, send.ids
            )
        else:
            delivery = TupleDelivery(send.target, name, task, stream, payload, send.roots, send.ids)
        self._buffer(delivery)

    def _buffer(self, delivery: Delivery | ProtocolMessage) -> None:
        if self._send_many is None:
            self.io.send(delivery)
            return
        out = self._out
        if not out:
            self._out_since = time.monotonic()
        out.append(delivery)
        if len(out) >= self.batch_size:
            self.flush()

    def _buffer_all(self, items: list[Delivery | ProtocolMessage]) -> None:
        """`_buffer` for several at once (a TaskIO with `send_many` only)."""
        if not items:
            return
        out = self._out
        if not out:
            self._out_since = time.monotonic()
        out += items
        if len(out) >= self.batch_size:
            self.flush()

    def flush(self) -> None:
        """Hand what is buffered to the worker as one list (waits while backpressured)."""
        if self._out:
            out, self._out = self._out, []
            self._send_many(out, self.stopping)  # type: ignore[misc]

    def flush_due(self, now: float) -> None:
        """Flush if the oldest buffered delivery is older than the flush interval."""
        if self._out and now - self._out_since >= self.flush_interval:
            self.flush()

    def carry_out(self, instruction: Instruction) -> None:
        """Do what a machine decided, other than sending an emitted payload."""
        if type(instruction) in _PROTOCOL and self._send_many is not None:
            self._buffer(instruction)  # the common case (an ack, an init), without a match
            return
        match instruction:
            case InitTree() | AckTree() | FailTree() | TreeDone() | TreeFailed():
                if self._send_many is None:
                    target, stream, values = message_stream(instruction)
                    name, task = self.context.component_id, self.context.task_id
                    self.io.send(TupleDelivery(target, name, task, stream, tuple(values)))
                else:  # as it is: the transport turns it into a tuple only for the wire
                    self._buffer(instruction)
            case CallAck(msg_id):
                self.stats.acked += 1
                self._call("ack", self.component.ack, msg_id)  # type: ignore[union-attr]
            case CallFail(msg_id):
                self.stats.failed += 1
                self._call("fail", self.component.fail, msg_id)  # type: ignore[union-attr]
            case _:
                raise TypeError(f"no executor carries out {instruction!r}")

    # --- liveness ---

    def mark(self, busy: bool = False, holding: int = 0) -> None:
        """Progress: the thread is back in its loop (busy False) or entering a call that
        may take long (busy True, with `holding` inputs in hand)."""
        self.progress_at = time.monotonic()
        self.busy = busy
        self.holding = holding

    def progress(self) -> Progress:
        return Progress(self.progress_at, self.busy, self.inbox.qsize() + self.holding)

    # --- running ---

    def _failed(self, what: str, fatal: bool = False) -> None:
        """Count and report the exception being handled. A `fatal` one ends the task: it is
        kept in `fatal` for the worker, which reports it and exits (a task that cannot run
        must not leave its tuples replaying forever)."""
        self.stats.errors += 1
        log.error(
            "task %d (%s) failed in %s:\n%s",
            self.context.task_id,
            self.context.component_id,
            what,
            traceback.format_exc(limit=8),
        )
        exc = sys.exc_info()[1]
        text = error_text(exc) if exc is not None else f"failed in {what}"
        if fatal:
            self.fatal = text
        else:
            self.io.report_error(self.context.component_id, self.context.task_id, text)

    def _call(self, what: str, fn: Any, *args: Any) -> bool:
        """Run user code; an exception is reported, counted and never kills the task."""
        try:
            fn(*args)
        except Exception:  # noqa: BLE001 - user code
            self._failed(what)
            return False
        return True

    def _run(self) -> None:
        if self.component is not None:
            self.mark(busy=True)
            try:
                self.component.initialize(self.conf, self.context)
            except Exception:  # noqa: BLE001 - user code
                self._failed("initialize", fatal=True)
                return
        self.stats.ready = self.ready_on_start
        self.mark()
        try:
            self.loop()
            self.flush()
        except Exception:  # noqa: BLE001 - a bug in a loop must not leave a silent dead task
            self._failed("the task loop", fatal=True)
            return
        if self.component is not None:
            self._call("cleanup", self.component.cleanup)

    def loop(self) -> None:  # pragma: no cover - overridden
        raise NotImplementedError
