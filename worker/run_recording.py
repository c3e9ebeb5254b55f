"""What `squall.testing.run` records of a run (in_process.py): every emit of every component,
per stream, and each ack and fail its spouts got, into its RunResult. It sits between a
component and its executor, so the executors run exactly as in a worker."""

from __future__ import annotations

import threading
from typing import Any

from squall.components import Spout
from squall.run_result import RunResult
from squall.tables import as_table
from squall.worker.executors import Executor


class EmitRecorder:
    """Sits between a component and its executor: records each emit, then passes it on."""

    def __init__(self, collector: Any, component: str, executor: Executor, result: RunResult):
        self.collector, self.component = collector, component
        self.executor, self.result = executor, result
        self.lock = threading.Lock()

    def emit(self, values: list[Any], stream: str, direct_task: int | None, msg_id: Any = None):
        row = tuple(values)  # any iterable, as the executor takes it
        targets = self.collector.emit(row, stream, direct_task, msg_id)
        with self.lock:
            self.result.emitted[(self.component, stream)].append(row)
        return targets  # a shell component answers need_task_ids with them

    def emit_batch(self, columns: Any, stream: str, direct_task: int | None, msg_id: Any = None):
        self.collector.emit_batch(columns, stream, direct_task, msg_id)
        fields = self.executor.streams[stream]
        table = as_table(columns, fields, f"{self.component} on stream {stream!r}")
        rows = zip(*(table.column(i).to_pylist() for i in range(len(fields))), strict=True)
        with self.lock:
            self.result.emitted[(self.component, stream)].extend(rows)


def record_verdicts(spout: Spout, name: str, result: RunResult) -> None:
    """Note each ack and fail the spout gets, then let the spout's own method run."""
    ack, fail = spout.ack, spout.fail

    def recorded_ack(msg_id: Any) -> None:
        result.acked[name].append(msg_id)
        ack(msg_id)

    def recorded_fail(msg_id: Any) -> None:
        result.failed[name].append(msg_id)
        fail(msg_id)

    spout.ack, spout.fail = recorded_ack, recorded_fail  # type: ignore[method-assign]
