"""What `squall.testing.run` records of a run: every emit of every component, per stream, and
each ack and fail its spouts got. It sits between a component and its executor, so the
executors run exactly as in a worker."""

from __future__ import annotations

import threading
from collections import defaultdict
from dataclasses import dataclass, field
from typing import Any

from squall.components import DEFAULT_STREAM, Spout
from squall.tables import as_table
from squall.worker.executors import Executor


@dataclass
class RunResult:
    """What each component emitted, per stream, and what became of the spouts' tuples."""

    emitted: dict[tuple[str, str], list[tuple[Any, ...]]] = field(
        default_factory=lambda: defaultdict(list)
    )
    acked: dict[str, list[Any]] = field(default_factory=lambda: defaultdict(list))
    failed: dict[str, list[Any]] = field(default_factory=lambda: defaultdict(list))
    errors: dict[str, list[str]] = field(default_factory=lambda: defaultdict(list))
    # the components whose tasks tracked the tuple trees: the spouts themselves, or __acker
    tree_trackers: list[str] = field(default_factory=list)

    def values(self, component: str, stream: str = DEFAULT_STREAM) -> list[tuple[Any, ...]]:
        """Every tuple `component` emitted on `stream`, batches as their rows."""
        return list(self.emitted.get((component, stream), []))


class Recorder:
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
