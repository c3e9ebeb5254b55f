"""Executors: the thread that runs one task of a spout, bolt or SparkBolt.

An executor owns its component instance and its inbox; it talks to the rest of the worker
only through `emit` (routing and transport) and `report_error`.
"""

from __future__ import annotations

import logging
import queue
import threading
import time
import traceback
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from squall.components import Bolt, Component, SparkBolt, Spout, TaskContext, Tuple

from .spark import SparkHolder

log = logging.getLogger("squall.worker")

Emit = Callable[[int, str, str, list[Any], int | None], int]  # -> deliveries made
ReportError = Callable[[str, str], None]


@dataclass
class TaskStats:
    emitted: Counter = field(default_factory=Counter)
    transferred: Counter = field(default_factory=Counter)
    executed: int = 0
    errors: int = 0
    idle: bool | None = None  # spouts only: the last next_tuple emitted nothing

    def snapshot(self) -> dict[str, Any]:
        return {
            "emitted": dict(self.emitted),
            "transferred": dict(self.transferred),
            "executed": self.executed,
            "errors": self.errors,
            "idle": self.idle,
        }


class _Collector:
    def __init__(self, executor: Executor) -> None:
        self.executor = executor

    def emit(self, values: list[Any], stream: str, direct_task: int | None) -> None:
        ex = self.executor
        fields = ex.streams.get(stream)
        if fields is None:
            raise ValueError(f"{ex.context.component_id} emits on undeclared stream {stream!r}")
        if len(values) != len(fields):
            raise ValueError(
                f"{ex.context.component_id} emits {len(values)} values on stream {stream!r}, "
                f"which declares {len(fields)} fields {list(fields)}"
            )
        delivered = ex.emit(
            ex.context.task_id, ex.context.component_id, stream, values, direct_task
        )
        ex.stats.emitted[stream] += 1
        ex.stats.transferred[stream] += delivered


class Executor:
    def __init__(
        self,
        component: Component,
        context: TaskContext,
        streams: dict[str, tuple[str, ...]],
        conf: dict[str, Any],
        emit: Emit,
        report_error: ReportError,
    ) -> None:
        self.component = component
        self.context = context
        self.streams = streams
        self.conf = conf
        self.emit = emit
        self.report_error = report_error
        self.stats = TaskStats()
        self.inbox: queue.Queue[Tuple] = queue.Queue()
        self.stopping = threading.Event()
        self.active = threading.Event()
        self.thread = threading.Thread(
            target=self._run, name=f"task-{context.task_id}", daemon=True
        )
        component.collector = _Collector(self)

    def start(self) -> None:
        self.thread.start()

    def stop(self) -> None:
        self.stopping.set()

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
        self.report_error(self.context.component_id, text)

    def _run(self) -> None:
        try:
            self.component.initialize(self.conf, self.context)
        except Exception:  # noqa: BLE001 - user code
            self._failed("initialize")
            return
        self.loop()
        try:
            self.component.cleanup()
        except Exception:  # noqa: BLE001 - user code
            self._failed("cleanup")

    def _idle(self) -> None:
        try:
            self.component.idle()
        except Exception:  # noqa: BLE001 - user code
            self._failed("idle")

    def loop(self) -> None:  # pragma: no cover - overridden
        raise NotImplementedError


class SpoutExecutor(Executor):
    component: Spout

    def loop(self) -> None:
        backoff = 0.001
        while not self.stopping.is_set():
            if not self.active.is_set():
                self.stats.idle = True
                self.active.wait(0.2)
                continue
            try:
                emitted = bool(self.component.next_tuple())
            except Exception:  # noqa: BLE001 - user code
                self._failed("next_tuple")
                emitted = False
            self.stats.idle = not emitted
            if emitted:
                backoff = 0.001
            else:
                time.sleep(backoff)
                backoff = min(backoff * 2, 0.1)


class BoltExecutor(Executor):
    component: Bolt

    def loop(self) -> None:
        while not self.stopping.is_set():
            try:
                tup = self.inbox.get(timeout=0.2)
            except queue.Empty:
                continue
            try:
                self.component.process(tup)
            except Exception:  # noqa: BLE001 - user code
                self._failed("process")
            if self.inbox.empty():
                self._idle()
            self.stats.executed += 1  # after idle(): a finished count means a flushed sink


class SparkBoltExecutor(Executor):
    """Gathers tuples into micro-batches and runs `process_batch(df)` as a Spark job per
    input stream; the returned DataFrame's rows are emitted on the default stream."""

    component: SparkBolt

    def __init__(self, *args: Any, spark: SparkHolder, input_fields: dict, **kwargs: Any):
        super().__init__(*args, **kwargs)
        self.spark = spark
        self.input_fields = input_fields  # (component, stream) -> fields
        self.batch_size = self.conf["topology.batch.size"]
        self.batch_timeout = self.conf["topology.batch.timeout.ms"] / 1000

    def _gather(self) -> list[Tuple]:
        batch: list[Tuple] = []
        deadline = None
        while len(batch) < self.batch_size and not self.stopping.is_set():
            timeout = 0.2 if deadline is None else max(0.0, deadline - time.monotonic())
            try:
                batch.append(self.inbox.get(timeout=timeout))
            except queue.Empty:
                if batch:
                    break
                continue
            if deadline is None:
                deadline = time.monotonic() + self.batch_timeout
        return batch

    def loop(self) -> None:
        try:
            self.spark.session()  # start the JVM before the first batch arrives
        except Exception:  # noqa: BLE001
            self._failed("starting Spark")
            return
        while not self.stopping.is_set():
            batch = self._gather()
            groups: dict[tuple[str, str], list[Tuple]] = {}
            for tup in batch:
                groups.setdefault((tup.source_component, tup.stream), []).append(tup)
            for (source, stream), tuples in sorted(groups.items()):
                try:
                    self._run_batch(self.input_fields[(source, stream)], tuples)
                except Exception:  # noqa: BLE001 - user code and Spark
                    self._failed("process_batch")
                if self.inbox.empty():
                    self._idle()
                self.stats.executed += len(tuples)

    def _run_batch(self, fields: tuple[str, ...], tuples: list[Tuple]) -> None:
        session = self.spark.session()
        df = session.createDataFrame([list(t.values) for t in tuples], schema=list(fields))
        result = self.component.process_batch(df)
        if result is not None:
            for row in result.collect():
                self.component.emit(list(row))


def executor_class(component: Component) -> type[Executor]:
    if isinstance(component, Spout):
        return SpoutExecutor
    if isinstance(component, SparkBolt):
        return SparkBoltExecutor
    return BoltExecutor
