"""Per-executor rows and per-component totals for Storm's UI pages, from a topology's
assignment and its workers' beats, as pure functions (time is passed in).

Every figure is for one of Storm's windows ("600", "10800", "86400", ":all-time"), read from
the tasks' beats by task_figures (junk counts as nothing). A component's execute and process
latency are executed-weighted averages over its tasks, its capacity the largest of its
tasks' over the last 10 minutes whatever the window (as in Storm), a spout's complete
latency the count-weighted average. Latencies
nobody measured stay unset, never a made-up 0.0. Latency histograms exist for ":all-time"
only (workers keep them cumulative, for Prometheus): a component's is the bucket-wise sum of
its tasks'.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any

from squall import latency_histogram as H
from squall import thrift_api as T
from squall.liveness import ROUNDING_SLACK_SECS, beat_is_current
from squall.nimbus.reads.task_figures import (
    ALL_TIME,
    I64_MAX,
    WINDOWS,
    average,
    busy_ms,
    capacity,
    complete_latency,
    complete_ms,
    count,
    latency_histograms,
    spark,
    stream_counts,
    window_of,
)
from squall.records import Assignment, Slot, WorkerBeat

SPOUT, BOLT = "spout", "bolt"
CAPACITY_WINDOW = "600"  # Storm's capacity is the last 10 minutes', whatever the window
__all__ = ["ALL_TIME", "WINDOWS", "complete_latency", "complete_ms", "count", "stream_counts"]


def is_system_id(name: str) -> bool:
    """Storm's Utils.isSystemId: system components and streams start with two underscores."""
    return name.startswith("__")


@dataclass(frozen=True)
class ExecutorRow:
    """One executor (squall runs one task per executor) as the UI shows it."""

    task: int
    component: str
    slot: Slot | None
    host: str
    uptime_secs: int
    stats: Mapping[str, Any] | None  # the task's counters from a current beat, if any


def executor_rows(
    assignment: Assignment | None,
    tasks: Mapping[int, str],
    beats: Mapping[Slot, WorkerBeat],
    now: float,
) -> list[ExecutorRow]:
    """Every task with its slot and, when its worker's beat is from the current assignment,
    its counters (the same rule getTopologyInfo applies: a beat from a worker that started
    before the task was assigned there says nothing about the task)."""
    now_secs = int(now)
    rows = []
    for task, component in sorted(tasks.items()):
        slot = assignment.task_slots.get(task) if assignment else None
        beat = beats.get(slot) if slot else None
        started = assignment.task_start_secs.get(task, now_secs) if assignment and slot else None
        assigned_for = now_secs - started if started is not None else 0
        fresh = beat is not None and beat_is_current(
            -beat.uptime_secs, -assigned_for, ROUNDING_SLACK_SECS
        )
        stats = beat.tasks.get(task) if fresh and beat is not None else None
        rows.append(
            ExecutorRow(
                task=task,
                component=component,
                slot=slot,
                host=assignment.node_host.get(slot[0], "") if assignment and slot else "",
                uptime_secs=assigned_for,
                stats=stats if isinstance(stats, Mapping) else None,
            )
        )
    return rows


@dataclass(frozen=True)
class Totals:
    executors: int = 0
    emitted: int = 0
    transferred: int = 0
    acked: int = 0
    failed: int = 0
    executed: int = 0
    complete_count: int = 0  # spout tuple trees with a measured complete latency
    complete_ms_sum: float = 0.0
    execute_ms_sum: float = 0.0  # bolts: time in execute over `executed`
    process_ms_sum: float = 0.0
    capacity: float | None = None  # the busiest task's, last 10 min; None: none executed
    spark_jobs: int = 0  # SparkBolts: micro-batch jobs, their rows and time
    spark_rows: int = 0
    spark_job_ms_sum: float = 0.0
    complete_histogram: H.Histogram | None = None  # ":all-time" only
    execute_histogram: H.Histogram | None = None
    process_histogram: H.Histogram | None = None

    @property
    def complete_ms(self) -> float | None:
        """Average complete latency over the measured trees; None when none was measured."""
        return average(self.complete_ms_sum, self.complete_count)

    @property
    def execute_ms(self) -> float | None:
        return average(self.execute_ms_sum, self.executed) if self.execute_ms_sum else None

    @property
    def process_ms(self) -> float | None:
        return average(self.process_ms_sum, self.executed) if self.process_ms_sum else None


def _sum(values: Iterable[int]) -> int:
    return min(sum(values), I64_MAX)


def totals(rows: Iterable[ExecutorRow], include_sys: bool, window: str = ALL_TIME) -> Totals:
    """Summed figures of `rows` for `window`; system streams (__ack_init, ...) count only
    when `include_sys`, as on Storm's pages."""
    rows = list(rows)
    stats = [window_of(r.stats, window) for r in rows]

    def streams(key: str) -> int:
        return _sum(
            n
            for s in stats
            for stream, n in stream_counts(s.get(key)).items()
            if include_sys or not is_system_id(stream)
        )

    latencies = [complete_latency(s.get("complete_ms")) for s in stats]
    recent = [window_of(r.stats, CAPACITY_WINDOW) for r in rows]
    capacities = [c for c in map(capacity, recent) if c is not None]
    sparks = [spark(s) for s in stats]
    histograms = [latency_histograms(s) if window == ALL_TIME else {} for s in stats]

    def merged(name: str) -> H.Histogram | None:
        return H.merge(h.get(name) for h in histograms)

    return Totals(
        complete_count=_sum(n for n, _ in latencies),
        complete_ms_sum=sum(total for _, total in latencies),
        executors=len(rows),
        emitted=streams("emitted"),
        transferred=streams("transferred"),
        acked=_sum(count(s.get("acked")) for s in stats),
        failed=_sum(count(s.get("failed")) for s in stats),
        executed=_sum(count(s.get("executed")) for s in stats),
        execute_ms_sum=sum(busy_ms(s, "execute_ms") for s in stats),
        process_ms_sum=sum(busy_ms(s, "process_ms") for s in stats),
        capacity=max(capacities) if capacities else None,
        spark_jobs=_sum(jobs for jobs, _, _ in sparks),
        spark_rows=_sum(rows for _, rows, _ in sparks),
        spark_job_ms_sum=sum(ms for _, _, ms in sparks),
        complete_histogram=merged("complete"),
        execute_histogram=merged("execute"),
        process_histogram=merged("process"),
    )


def per_stream(
    rows: Iterable[ExecutorRow], include_sys: bool, window: str = ALL_TIME
) -> dict[str, Totals]:
    """Emitted and transferred per output stream."""
    emitted: dict[str, int] = {}
    transferred: dict[str, int] = {}
    for row in rows:
        for key, into in (("emitted", emitted), ("transferred", transferred)):
            for stream, n in stream_counts(window_of(row.stats, window).get(key)).items():
                if include_sys or not is_system_id(stream):
                    into[stream] = min(into.get(stream, 0) + n, I64_MAX)
    return {
        s: Totals(emitted=emitted.get(s, 0), transferred=transferred.get(s, 0))
        for s in sorted(emitted.keys() | transferred.keys())
    }


def error_infos(entries: Iterable[Mapping[str, Any]]) -> list[Any]:
    return [
        T.ErrorInfo(
            error=e["error"],
            error_time_secs=int(e["time_secs"]),
            host=e.get("host"),
            port=e.get("port"),
        )
        for e in entries
    ]


def last_error(entries: Iterable[Mapping[str, Any]]) -> Any | None:
    """The newest error report (Storm's lastError), or None."""
    infos = error_infos(entries)
    return max(infos, key=lambda e: e.error_time_secs) if infos else None


def component_type(kind: str) -> int:
    return T.ComponentType.SPOUT if kind == SPOUT else T.ComponentType.BOLT


def aggregate_stats(
    kind: str, t: Totals, num_tasks: int | None = None, error: Any | None = None
) -> Any:
    """ComponentAggregateStats for a spout or a bolt with totals `t`."""
    if kind == SPOUT:
        specific = T.SpecificAggregateStats(
            spout=T.SpoutAggregateStats(
                complete_latency_ms=t.complete_ms,
                complete_latency_histogram=latency_histogram(t.complete_histogram),
            )
        )
    else:
        specific = T.SpecificAggregateStats(
            bolt=T.BoltAggregateStats(
                executed=t.executed,
                execute_latency_ms=t.execute_ms,
                process_latency_ms=t.process_ms,
                capacity=t.capacity,
                execute_latency_histogram=latency_histogram(t.execute_histogram),
                process_latency_histogram=latency_histogram(t.process_histogram),
                **_spark_fields(t),
            )
        )
    return T.ComponentAggregateStats(
        type=component_type(kind),
        common_stats=T.CommonAggregateStats(
            num_executors=t.executors,
            num_tasks=t.executors if num_tasks is None else num_tasks,
            emitted=t.emitted,
            transferred=t.transferred,
            acked=t.acked,
            failed=t.failed,
        ),
        specific_stats=specific,
        last_error=error,
    )


def latency_histogram(h: H.Histogram | None) -> Any | None:
    """squall's LatencyHistogram for Thrift, or None (unset) when nothing was measured."""
    if h is None:
        return None
    return T.LatencyHistogram(
        upper_bounds_ms=list(H.BOUNDS_MS), bucket_counts=list(h.counts), sum_ms=h.sum_ms
    )


def _spark_fields(t: Totals) -> dict[str, Any]:
    """squall's micro-batch fields of BoltAggregateStats: only for a SparkBolt."""
    if not t.spark_jobs:
        return {}
    jobs = t.spark_jobs
    return {
        "spark_jobs": jobs,
        "spark_rows": t.spark_rows,
        "spark_job_ms": t.spark_job_ms_sum / jobs,
    }
