"""Executors: the thread that runs one task of a spout, bolt, SparkBolt or acker.

An executor owns its component instance and its inbox. It reaches the rest of the worker
only through `TaskIO` (routing, sending, acker choice, error reports), so the reliability
logic here is independent of transport and ZooKeeper.
"""

from __future__ import annotations

import logging
import queue
import threading
import time
import traceback
from collections import Counter, OrderedDict
from dataclasses import dataclass, field
from typing import Any, Protocol

import pyarrow as pa

from squall.components import (
    Batch,
    Bolt,
    Component,
    SparkBolt,
    Spout,
    TaskContext,
    Tuple,
)
from squall.thrift_api import DEFAULT_STREAM

from .acking import (
    ACK_ACK,
    ACK_DONE,
    ACK_FAIL,
    ACK_FAILED,
    ACK_INIT,
    AckerState,
    new_id,
)
from .batches import as_table
from .codec import BatchDelivery, Delivery
from .spark import SparkHolder, result_table

log = logging.getLogger("squall.worker")


class TaskIO(Protocol):
    """What an executor needs from its worker."""

    def targets(
        self, component: str, task: int, stream: str, values: list[Any], direct: int | None
    ) -> list[int]: ...

    def split(
        self, component: str, task: int, stream: str, table: pa.Table, direct: int | None
    ) -> list[tuple[int, pa.Table]]: ...

    def send(self, target: int, delivery: Delivery) -> None: ...

    def acker_for(self, root: int) -> int | None: ...

    def report_error(self, component: str, text: str) -> None: ...


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


Input = Tuple | Batch
Part = tuple[int, list[Any] | pa.Table]  # a target task and the values or rows it gets


def rows(item: Input) -> int:
    return len(item) if isinstance(item, Batch) else 1


class Executor:
    def __init__(
        self,
        component: Component | None,
        context: TaskContext,
        streams: dict[str, tuple[str, ...]],
        conf: dict[str, Any],
        io: TaskIO,
    ) -> None:
        self.component = component
        self.context = context
        self.streams = streams
        self.conf = conf
        self.io = io
        self.stats = TaskStats()
        self.inbox: queue.Queue[Input] = queue.Queue()
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
        self._deliver([(target, values) for target in targets], stream, msg_id)
        self.stats.emitted[stream] += 1
        self.stats.transferred[stream] += len(targets)

    def emit_batch(self, columns: Any, stream: str, direct: int | None, msg_id: Any) -> None:
        name = self.context.component_id
        table = as_table(columns, self._fields(stream), f"{name} on stream {stream!r}")
        if not table.num_rows:
            return
        parts = self.io.split(name, self.context.task_id, stream, table, direct)
        self._deliver(parts, stream, msg_id)
        self.stats.emitted[stream] += table.num_rows
        self.stats.transferred[stream] += sum(part.num_rows for _, part in parts)

    def _deliver(self, parts: list[Part], stream: str, msg_id: Any) -> None:
        for target, payload in parts:
            self._send(target, stream, payload, [], [])

    def _send(self, target: int, stream: str, payload: Any, roots: list, ids: list) -> None:
        name, task = self.context.component_id, self.context.task_id
        if isinstance(payload, pa.Table):
            delivery: Delivery = BatchDelivery(
                target, name, task, stream, payload, tuple(roots), tuple(ids)
            )
        else:
            delivery = [target, name, task, stream, payload, roots, ids]
        self.io.send(target, delivery)

    def _system(self, target: int | None, stream: str, values: list[Any]) -> None:
        if target is not None:
            self._send(target, stream, values, [], [])

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
        self.stats.ready = not isinstance(self, SparkBoltExecutor)
        self.loop()
        if self.component is not None:
            self._call("cleanup", self.component.cleanup)

    def loop(self) -> None:  # pragma: no cover - overridden
        raise NotImplementedError


class SpoutExecutor(Executor):
    """Calls next_tuple while the topology is active and fewer than topology.max.spout.pending
    tracked tuples are in flight; turns acker verdicts and timeouts into ack/fail calls."""

    component: Spout

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.pending: OrderedDict[int, tuple[Any, float]] = OrderedDict()
        self.max_pending = self.conf.get("topology.max.spout.pending") or 0
        self.acked_untracked: list[Any] = []

    def _deliver(self, parts: list[Part], stream: str, msg_id: Any) -> None:
        root = None
        if msg_id is not None and parts:
            root = new_id()
            acker = self.io.acker_for(root)
            if acker is None:
                root = None
        if root is None:
            super()._deliver(parts, stream, msg_id)
            if msg_id is not None:  # untracked: acked as soon as it is sent (Storm's rule)
                self.acked_untracked.append(msg_id)
            return
        xor = 0
        for target, payload in parts:
            edge = new_id()
            xor ^= edge
            self._send(target, stream, payload, [root], [edge])
        self.pending[root] = (msg_id, time.monotonic())
        self._system(acker, ACK_INIT, [root, xor, self.context.task_id])

    def _settle(self) -> None:
        while True:
            try:
                tup = self.inbox.get_nowait()
            except queue.Empty:
                break
            entry = self.pending.pop(tup.values[0], None)
            if entry is not None:
                self._verdict(entry[0], ok=tup.stream == ACK_DONE)
        now = time.monotonic()
        while self.pending:
            root, (msg_id, emitted_at) = next(iter(self.pending.items()))
            if now - emitted_at <= self.timeout:
                break
            del self.pending[root]
            self._verdict(msg_id, ok=False)
        for msg_id in self.acked_untracked:
            self._verdict(msg_id, ok=True)
        self.acked_untracked.clear()
        self.stats.pending = len(self.pending)

    def _verdict(self, msg_id: Any, ok: bool) -> None:
        if ok:
            self.stats.acked += 1
            self._call("ack", self.component.ack, msg_id)
        else:
            self.stats.failed += 1
            self._call("fail", self.component.fail, msg_id)

    def loop(self) -> None:
        backoff = 0.001
        while not self.stopping.is_set():
            self._settle()
            if not self.active.is_set():
                self.stats.idle = True
                self.active.wait(0.1)
                continue
            if self.max_pending and len(self.pending) >= self.max_pending:
                time.sleep(0.001)  # backpressure: wait for acks or timeouts
                continue
            emitted = False
            try:
                emitted = bool(self.component.next_tuple())
            except Exception:  # noqa: BLE001 - user code
                self._failed("next_tuple")
            self.stats.idle = not emitted and not self.pending
            if emitted:
                backoff = 0.001
            else:
                time.sleep(backoff)
                backoff = min(backoff * 2, 0.05)
        self._settle()


class BoltExecutor(Executor):
    """Runs `process` per tuple. Everything emitted meanwhile is anchored to that input, which
    is acked when `process` returns and failed when it raises (Storm's BasicBolt)."""

    component: Bolt

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.anchor_roots: list[int] = []
        self.tracked = False
        self.acc = 0

    def _anchor(self, inputs: list[Input]) -> None:
        """Anchor what is emitted next to every tuple of `inputs`."""
        parity: Counter = Counter(r for t in inputs for r in t.ids)
        self.anchor_roots = [r for r, n in parity.items() if n % 2]
        self.tracked = any(t.ids for t in inputs)
        self.acc = 0

    def _deliver(self, parts: list[Part], stream: str, msg_id: Any) -> None:
        if not self.tracked:
            super()._deliver(parts, stream, msg_id)
            return
        for target, payload in parts:
            edge = new_id()
            self.acc ^= edge
            self._send(target, stream, payload, self.anchor_roots, [edge] * len(self.anchor_roots))

    def _finish(self, inputs: list[Input], ok: bool) -> None:
        for tup in inputs:
            for root, value in tup.ids.items():
                acker = self.io.acker_for(root)
                if ok:
                    self._system(acker, ACK_ACK, [root, value ^ self.acc])
                else:
                    self._system(acker, ACK_FAIL, [root])
        self.tracked = False

    def _drained(self) -> None:
        if self.inbox.empty():
            self._call("idle", self.component.idle)

    def loop(self) -> None:
        while not self.stopping.is_set():
            try:
                item = self.inbox.get(timeout=0.2)
            except queue.Empty:
                continue
            self._anchor([item])
            ok = self._call("process", self._process, item)
            self._drained()  # before the ack: a sink flushes before its input counts as done
            self._finish([item], ok)
            self.stats.executed += rows(item)

    def _process(self, item: Input) -> None:
        """A batch is acked whole: one failing row fails it."""
        if isinstance(item, Batch):
            self.component.process_table(item)
        else:
            self.component.process(item)


class SparkBoltExecutor(BoltExecutor):
    """Gathers tuples into micro-batches and runs `process_batch(df)` as a Spark job per
    input stream; the returned DataFrame's rows are emitted on the default stream, each
    anchored to the whole batch, and the batch is acked once they are sent."""

    component: SparkBolt

    def __init__(self, *args: Any, spark: SparkHolder, input_fields: dict, **kwargs: Any):
        super().__init__(*args, **kwargs)
        self.spark = spark
        self.input_fields = input_fields  # (component, stream) -> fields
        self.batch_size = self.conf["topology.batch.size"]
        self.batch_timeout = self.conf["topology.batch.timeout.ms"] / 1000

    def _gather(self) -> list[Input]:
        batch: list[Input] = []
        size = 0
        deadline = None
        while size < self.batch_size and not self.stopping.is_set():
            timeout = 0.2 if deadline is None else max(0.0, deadline - time.monotonic())
            try:
                batch.append(self.inbox.get(timeout=timeout))
                size += rows(batch[-1])
            except queue.Empty:
                if batch:
                    break
                continue
            if deadline is None:
                deadline = time.monotonic() + self.batch_timeout
        return batch

    def loop(self) -> None:
        if not self._call("starting Spark", self.spark.session):
            return
        self.stats.ready = True
        while not self.stopping.is_set():
            groups: dict[tuple[str, str], list[Input]] = {}
            for item in self._gather():
                groups.setdefault((item.source_component, item.stream), []).append(item)
            for (source, stream), items in sorted(groups.items()):
                self._anchor(items)
                fields = self.input_fields[(source, stream)]
                started = time.perf_counter()
                ok = self._call("process_batch", self._run_batch, fields, items)
                executed = sum(rows(item) for item in items)
                log.debug(
                    "task %d: batch of %d in %.3fs",
                    self.context.task_id,
                    executed,
                    time.perf_counter() - started,
                )
                self._drained()
                self._finish(items, ok)
                self.stats.executed += executed

    def _run_batch(self, fields: tuple[str, ...], items: list[Input]) -> None:
        with self.spark.dataframe(fields, items) as df:
            result = self.component.process_batch(df)
            if result is not None:
                self.emit_batch(result_table(result), DEFAULT_STREAM, None, None)


class AckerExecutor(Executor):
    """The __acker task: XORs ids per root and tells the spout task when a tree completes
    or fails."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.state = AckerState()

    def loop(self) -> None:
        last_expiry = time.monotonic()
        while not self.stopping.is_set():
            try:
                tup = self.inbox.get(timeout=0.5)
            except queue.Empty:
                tup = None
            now = time.monotonic()
            if tup is not None:
                self._handle(tup, now)
            if now - last_expiry > 1:
                self.state.expire(now, self.timeout)
                last_expiry = now

    def _handle(self, tup: Input, now: float) -> None:
        root = tup.values[0]
        if tup.stream == ACK_INIT:
            done = self.state.init(root, tup.values[1], tup.values[2], now)
        elif tup.stream == ACK_ACK:
            done = self.state.ack(root, tup.values[1], now)
        elif tup.stream == ACK_FAIL:
            self._system(self.state.fail(root), ACK_FAILED, [root])
            return
        else:
            return
        self._system(done, ACK_DONE, [root])


def executor_class(component: Component) -> type[Executor]:
    if isinstance(component, Spout):
        return SpoutExecutor
    if isinstance(component, SparkBolt):
        return SparkBoltExecutor
    return BoltExecutor
