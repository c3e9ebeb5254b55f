"""Executors: the thread that runs one task of a spout, bolt, SparkBolt or acker.

An executor is a thin loop: it calls the user's component, feeds what happens (emits, acker
verdicts, ticks of the clock) to its task's pure decision machine (spout_tracking, anchoring,
acker, micro_batches) and carries out the instructions the machine gives.

The seam to the rest of the worker is `TaskIO` and the executor's `inbox`, nothing else:
no ZooKeeper, no sockets, no subprocesses. To run a topology in one process (squall.testing),
build each task's executor with `executor_factory.make_executor`, give them all one TaskIO
whose `send` puts each delivery, turned into what an inbox holds (`inbox_item`), on the
target executor's inbox, and call `start()` / `stop()`. An inbox holds `Tuple` or `Batch`
inputs for bolts and protocol messages (`acking.TreeDone`, `InitTree`, ...) for spouts and
ackers.
"""

from __future__ import annotations

import logging
import queue
import threading
import traceback
from collections import Counter
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any, Protocol

import pyarrow as pa

from squall.components import Batch, Component, TaskContext, Tuple

from .acking import (
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
from .tables import as_table

log = logging.getLogger("squall.worker")

Input = Tuple | Batch
InboxItem = Input | ProtocolMessage


class TaskIO(Protocol):
    """What an executor needs from its worker: where an emit goes, the acker tasks, a way
    to send a delivery to any task, and a place to report user-code errors."""

    ackers: tuple[int, ...]

    def targets(
        self, component: str, task: int, stream: str, values: Sequence[Any], direct: int | None
    ) -> list[int]: ...

    def split(
        self, component: str, task: int, stream: str, table: pa.Table, direct: int | None
    ) -> list[tuple[int, pa.Table]]: ...

    def send(self, delivery: Delivery) -> None: ...

    def report_error(self, component: str, text: str) -> None: ...


def inbox_item(delivery: Delivery, fields: tuple[str, ...]) -> InboxItem:
    """What the target executor's inbox takes for a delivery on a stream with `fields`."""
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


@dataclass
class TaskStats:
    emitted: Counter = field(default_factory=Counter)
    transferred: Counter = field(default_factory=Counter)
    executed: int = 0
    acked: int = 0
    failed: int = 0
    errors: int = 0
    pending: int = 0
    idle: bool | None = None  # spouts only: the last next_tuple emitted nothing
    ready: bool = False  # initialized (and, for a SparkBolt, its SparkSession is up)

    def snapshot(self) -> dict[str, Any]:
        return {
            "emitted": dict(self.emitted),
            "transferred": dict(self.transferred),
            "executed": self.executed,
            "acked": self.acked,
            "failed": self.failed,
            "errors": self.errors,
            "pending": self.pending,
            "idle": self.idle,
            "ready": self.ready,
        }


class _Collector:
    def __init__(self, executor: Executor) -> None:
        self.executor = executor

    def emit(
        self, values: list[Any], stream: str, direct_task: int | None, msg_id: Any = None
    ) -> None:
        self.executor.emit(values, stream, direct_task, msg_id)

    def emit_batch(
        self, columns: Any, stream: str, direct_task: int | None, msg_id: Any = None
    ) -> None:
        self.executor.emit_batch(columns, stream, direct_task, msg_id)


Instruction = Send | InitTree | AckTree | FailTree | TreeDone | TreeFailed | CallAck | CallFail


class Executor:
    ready_on_start = True  # a SparkBolt is ready once its SparkSession is up

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
        self.inbox: queue.Queue[InboxItem] = queue.Queue()
        self.stopping = threading.Event()
        self.active = threading.Event()
        self.timeout = conf["topology.message.timeout.secs"]
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

    def emit(self, values: list[Any], stream: str, direct: int | None, msg_id: Any) -> None:
        fields = self._fields(stream)
        name = self.context.component_id
        if len(values) != len(fields):
            raise ValueError(
                f"{name} emits {len(values)} values on stream {stream!r}, "
                f"which declares {len(fields)} fields {list(fields)}"
            )
        targets = self.io.targets(name, self.context.task_id, stream, values, direct)
        self._send_parts(stream, [(target, tuple(values)) for target in targets], msg_id)
        self.stats.emitted[stream] += 1
        self.stats.transferred[stream] += len(targets)

    def emit_batch(self, columns: Any, stream: str, direct: int | None, msg_id: Any) -> None:
        name = self.context.component_id
        table = as_table(columns, self._fields(stream), f"{name} on stream {stream!r}")
        if not table.num_rows:
            return
        parts = self.io.split(name, self.context.task_id, stream, table, direct)
        self._send_parts(stream, parts, msg_id)
        self.stats.emitted[stream] += table.num_rows
        self.stats.transferred[stream] += sum(part.num_rows for _, part in parts)

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
        self.io.send(delivery)

    def carry_out(self, instruction: Instruction) -> None:
        """Do what a machine decided, other than sending an emitted payload."""
        match instruction:
            case InitTree() | AckTree() | FailTree() | TreeDone() | TreeFailed():
                target, stream, values = message_stream(instruction)
                name, task = self.context.component_id, self.context.task_id
                self.io.send(TupleDelivery(target, name, task, stream, tuple(values)))
            case CallAck(msg_id):
                self.stats.acked += 1
                self._call("ack", self.component.ack, msg_id)  # type: ignore[union-attr]
            case CallFail(msg_id):
                self.stats.failed += 1
                self._call("fail", self.component.fail, msg_id)  # type: ignore[union-attr]
            case _:
                raise TypeError(f"no executor carries out {instruction!r}")

    # --- running ---

    def _failed(self, what: str) -> None:
        self.stats.errors += 1
        text = traceback.format_exc(limit=8)
        log.error(
            "task %d (%s) failed in %s:\n%s",
            self.context.task_id,
            self.context.component_id,
            what,
            text,
        )
        self.io.report_error(self.context.component_id, text)

    def _call(self, what: str, fn: Any, *args: Any) -> bool:
        """Run user code; an exception is reported, counted and never kills the task."""
        try:
            fn(*args)
        except Exception:  # noqa: BLE001 - user code
            self._failed(what)
            return False
        return True

    def _run(self) -> None:
        if self.component is not None and not self._call(
            "initialize", self.component.initialize, self.conf, self.context
        ):
            return
        self.stats.ready = self.ready_on_start
        self.loop()
        if self.component is not None:
            self._call("cleanup", self.component.cleanup)

    def loop(self) -> None:  # pragma: no cover - overridden
        raise NotImplementedError
