"""The loops of bolt tasks: a plain Bolt runs `process` per input; a SparkBolt runs
`process_batch(df)` per micro-batch and input stream. Anchoring and acking are decided by
`Anchoring`, micro-batches by `MicroBatcher`, tick tuples by `TickSchedule`; these loops
call user code and carry out."""

from __future__ import annotations

import logging
import time
from collections.abc import Sequence
from typing import Any

from squall.components import DEFAULT_STREAM, Batch, SparkBolt, TaskContext, Tuple

from .acking import Tick
from .anchoring import Anchoring
from .executors import Executor, Input, Instruction
from .micro_batches import Arrived, Flush, MicroBatcher, RunSparkJob, rows
from .spark import SparkHolder
from .spark_handoff import result_table
from .task_seam import TaskIO
from .tick_tuples import TickSchedule, tick_freq, tick_tuple

log = logging.getLogger("squall.worker")
IDLE_WAIT = 0.2  # seconds an idle bolt waits for input before it looks again


class BoltExecutor(Executor):
    """Everything emitted while an input is processed is anchored to it; the input is acked
    when `process` returns and failed when it raises (Storm's BasicBolt)."""

    kind = "bolt"

    def _init_kind(self) -> None:
        self.anchoring = Anchoring(self.io.ackers, self.new_id)
        freq = tick_freq(self.conf, self.component_id)
        self.ticks: TickSchedule | None = None if freq is None else TickSchedule(freq)

    def _emitted(self, targets: tuple[int, ...], msg_id: Any) -> Sequence[Instruction]:
        return self.anchoring.emitted_to(targets)

    def take(self, inputs: Sequence[Input]) -> None:
        anchors = (inputs[0].ids,) if len(inputs) == 1 else tuple(item.ids for item in inputs)
        self.anchoring.taken(anchors)

    def finish(self, ok: bool) -> None:
        """The inputs taken are done: acked (`ok`) or failed."""
        # AckTree and FailTree: protocol messages only
        self._buffer_protocol(self.anchoring.processed(ok))  # type: ignore[arg-type]

    def _drained(self) -> None:
        if self.inbox.empty():
            self._call("idle", self.component.idle)

    def execute(self, item: Input) -> None:
        self.execute_all([item])

    def execute_all(self, items: Sequence[Input]) -> None:
        """Process a wake-up's inputs one by one, each anchoring what it emits; the emits and
        acks of all of them leave in one flush at the end (or when the interval passes)."""
        tables = [item for item in items if type(item) is Batch]  # rows() only for these
        left = total = len(items) - len(tables) + sum(map(rows, tables))
        failed = 0
        last = len(items) - 1
        # per input, inline: mark, take, _call of process and flush_due (a Python call each
        # per tuple was a tenth of a bolt's cost)
        anchoring, clock, interval = self.anchoring, time.monotonic, self.flush_interval
        process, process_table = self.component.process, self.component.process_table
        started = clock()  # one clock read per batch for the task's latencies
        for n, item in enumerate(items):
            self.progress_at = now = clock()
            self.busy, self.holding = True, left
            anchoring.taken_one(item.roots, item.root_ids)  # take([item]), as it is
            one = type(item) is Tuple
            size = 1 if one else rows(item)
            try:  # a table of tuples is acked whole: one failing row fails it
                if one:
                    process(item)
                else:
                    process_table(item)
                ok = True
            except Exception:  # noqa: BLE001 - user code
                self._failed("process")
                ok = False
            if n == last:
                self._drained()  # before the ack: a sink flushes before its input counts
            self.finish(ok)
            left -= size
            failed += 0 if ok else size
            if self._held and now - self._out_since >= interval:
                self.flush()
        self.mark()
        executing = self.progress_at - started
        self.stats.executed_batch(total, executing, failed)
        self.flush()
        self.stats.processed_batch(total, executing, time.monotonic() - started)

    def turn(self) -> float:
        self.mark()
        items = self.inbox.take(self.batch_size, 0)
        if items:
            self.execute_all(items)  # type: ignore[arg-type]
        ticks = self.ticks
        if ticks is None:
            return 0.0 if items else IDLE_WAIT
        now = time.monotonic()
        if ticks.poll(now):  # after the inputs that came before it, as in Storm's queue
            self.tick(ticks.freq)
        return 0.0 if items else min(IDLE_WAIT, ticks.wait(now))

    def tick(self, freq: int) -> None:
        """Give the component a tick tuple: unanchored (what it emits meanwhile is
        untracked), never acked or failed, not counted as executed; an exception in it is
        reported as an error, as any in user code."""
        self.mark(busy=True)
        self.anchoring.taken_one((), ())
        component = self.component
        handler = getattr(component, "process_tick", None) or getattr(component, "process")  # noqa: B009
        self._call("process_tick", handler, tick_tuple(freq))
        self.anchoring.processed(True)  # no roots: nothing to ack
        self.mark()
        self.flush()


class SparkBoltExecutor(BoltExecutor):
    """The returned DataFrame's rows are emitted on the default stream, each anchored to the
    whole group of inputs of its Spark job, which is acked once they are sent."""

    ready_on_start = False

    def __init__(
        self,
        component: SparkBolt,
        context: TaskContext,
        streams: dict[str, tuple[str, ...]],
        conf: dict[str, Any],
        io: TaskIO,
        *,
        spark: SparkHolder,
        input_fields: dict,
    ) -> None:
        super().__init__(component, context, streams, conf, io)
        self.spark = spark
        self.input_fields = input_fields  # (component, stream) -> fields
        self.batcher = MicroBatcher(
            self.conf["topology.batch.size"], self.conf["topology.batch.timeout.ms"] / 1000
        )

    def loop(self) -> None:
        self.mark(busy=True)
        try:
            self.spark.session()
        except Exception:  # noqa: BLE001 - a SparkSession that cannot start is fatal
            self._failed("starting Spark", fatal=True)
            return
        self.stats.ready = True
        while not self.stopping.is_set():
            self.mark(holding=self.batcher.rows)
            now = time.monotonic()
            wait = self.batcher.wait(now, 0.2)
            if self.ticks is not None:
                wait = min(wait, self.ticks.wait(now))
            items = self.inbox.take(self.batch_size, wait)
            jobs, ticked = self.gathered(items, time.monotonic())  # type: ignore[arg-type]
            if not self.run_jobs(jobs):
                return
            if ticked:
                self.tick(ticked)
        self.run_jobs(self.batcher.handle(Flush()))

    def gathered(self, items: Sequence[Input], now: float) -> tuple[list[RunSparkJob], int]:
        """The micro-batches due once `items` arrived at `now`, and the tick period when a
        tick is due (0 when none): a tick runs the micro-batch gathered so far, whatever its
        size and age (a windowed flush on Storm's clock)."""
        jobs: list[RunSparkJob] = []
        for item in items:
            jobs += self.batcher.handle(Arrived(item, now))
        jobs += self.batcher.handle(Tick(now))
        ticks = self.ticks
        if ticks is None or not ticks.poll(now):
            return jobs, 0
        return jobs + self.batcher.handle(Flush()), ticks.freq

    def run_jobs(self, jobs: list[RunSparkJob]) -> bool:
        """Run the micro-batches; False when the SparkSession died under a failed job (the
        task then ends as fatal: no later job could run)."""
        for job in jobs:
            self.mark(busy=True, holding=job.rows)
            self.take(job.items)
            fields = self.input_fields[(job.source, job.stream)]
            started = time.perf_counter()
            ok = self._call("process_batch", self._run_job, fields, job.items)
            if not ok and not self.spark.alive():
                self.fatal = (
                    self.spark.lost or "SparkSession stopped: its SparkContext is no longer running"
                )
                self.finish(False)
                return False
            took = time.perf_counter() - started
            log.debug("task %d: micro-batch of %d in %.3fs", self.context.task_id, job.rows, took)
            self._drained()
            self.finish(ok)
            self.stats.spark_job(job.rows, took, ok)
            self.flush()
            done = time.perf_counter() - started
            self.stats.processed_batch(job.rows, 0.0, done)
        return True

    def _run_job(self, fields: tuple[str, ...], items: Sequence[Input]) -> None:
        with self.spark.dataframe(fields, items) as df:
            result = self.component.process_batch(df)
            if result is not None:
                # through the component's collector, as the bolt's own emits go, so what
                # sits there (squall.testing's recorder) sees the micro-batch's result too
                self.component.collector.emit_batch(
                    result_table(result), DEFAULT_STREAM, None, None
                )
