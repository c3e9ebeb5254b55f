"""One task's figures as Storm reports them, for the worker's heartbeat.

The executor's thread counts cumulatively (emits per stream, executed inputs, acks, fails,
time in execute, SparkBolt jobs); nothing here runs per tuple. Storm's rolling windows (600 s,
10800 s, 86400 s) are made at heartbeat time from those cumulative counters: every 1/BUCKETS
of a window the beat keeps a copy of the counters (a bucket mark), and a window's figures are
the counters now minus those at the oldest mark inside the window. So the hot path pays
nothing for windows, memory is fixed (BUCKETS + 1 marks per window) and a window is exact to
one bucket (plus one heartbeat period): each window carries the `secs` it really covers,
which is what capacity divides by.

What the figures mean (Storm's names; squall's bolts are BasicBolts, acked as they return):
- execute latency: mean time in `process` per input row, measured per batch of inputs (the
  executor reads the clock once per batch, not per tuple); for a SparkBolt, its Spark job's
  time divided by the job's rows.
- process latency: from the start of an input's execute to its ack being handed to the
  transport (acks leave with the batch's flush). Per batch, the inputs' start times are
  taken as evenly spread over the batch, so process >= execute, and the difference is the
  time an input's ack waited for the rest of its batch. A SparkBolt's is from the start of
  its micro-batch's job (the wait for the micro-batch to close is not in it).
- capacity: time in execute / the window's length (Storm's executed * execute latency /
  window), 1.0 meaning the task was busy the whole window; nimbus serves the 600 s one, as
  Storm does.

Latency histograms (all-time, cumulative, fixed buckets: squall/latency_histogram.py) go to
the beat's "histograms" beside the windows, not in them: Prometheus makes its own windows
from cumulative buckets. A batch's inputs are counted in the bucket of their mean latency,
as that mean is all the executor measures (the clock is read once per batch).

Pure apart from `TaskStats.snapshot`'s default clock; time is passed in everywhere else.
"""

from __future__ import annotations

import time
from collections import defaultdict, deque
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from squall.latency_histogram import Recorder

from .latency import CompleteLatency

WINDOWS = (600, 10800, 86400)  # Storm's windows, in seconds, besides all-time
BUCKETS = 20  # marks per window: a window is exact to 1/BUCKETS of its length

Figures = dict[str, Any]  # cumulative counters: numbers, or dicts of numbers (per stream)


def difference(now: Mapping[str, Any], then: Mapping[str, Any]) -> Figures:
    """`now - then`, key by key (nested dicts too); a key missing from `then` counts as 0."""
    out: Figures = {}
    for key, value in now.items():
        before = then.get(key)
        if isinstance(value, Mapping):
            out[key] = difference(value, before if isinstance(before, Mapping) else {})
        else:
            out[key] = _round(value - (before if isinstance(before, int | float) else 0))
    return out


def _round(value: Any) -> Any:
    """A count stays an int. (Typed `float`, mypyc's compiled build turned every count into a
    float, which nimbus's heartbeat reader rightly takes for junk: no capacity, no latency.)"""
    return value if isinstance(value, int) else round(value, 3)


class RollingWindows:
    """Bucket marks of cumulative figures, one ring per window; time passed in."""

    def __init__(
        self, started: float, windows: tuple[int, ...] = WINDOWS, buckets: int = BUCKETS
    ) -> None:
        self.started = started
        self.buckets = buckets
        self.marks: dict[int, deque[tuple[float, Figures]]] = {
            w: deque([(started, {})], maxlen=buckets + 1) for w in windows
        }

    def record(self, now: float, figures: Figures) -> None:
        """Keep `figures` as a mark of every window whose newest mark is a bucket old."""
        for window, marks in self.marks.items():
            if now - marks[-1][0] >= window / self.buckets:
                marks.append((now, figures))

    def windows(self, now: float, figures: Figures) -> dict[str, Figures]:
        """Each window's figures, keyed as Storm keys windows ("600", ...), with `secs`: the
        span they cover (the oldest mark within the window, else the newest mark)."""
        out = {}
        for window, marks in self.marks.items():
            inside = [(t, f) for t, f in marks if now - t <= window]
            since, base = inside[0] if inside else marks[-1]
            out[str(window)] = {**difference(figures, base), "secs": _round(max(now - since, 0))}
        return out


@dataclass
class SparkFigures:
    """A SparkBolt's micro-batches: Spark jobs run, rows they took, time in them."""

    jobs: int = 0
    rows: int = 0
    job_ms: float = 0.0


@dataclass
class TaskStats:
    """Written by the task's thread; `snapshot` is read by the heartbeat thread."""

    # per stream; defaultdicts, not Counters: a Counter's Python-level __delitem__ routes every
    # `+= 1` (twice per emit) through a slot wrapper, ~60 ns more each
    emitted: defaultdict[str, int] = field(default_factory=lambda: defaultdict(int))
    transferred: defaultdict[str, int] = field(default_factory=lambda: defaultdict(int))
    executed: int = 0
    acked: int = 0
    failed: int = 0
    errors: int = 0
    pending: int = 0
    idle: bool | None = None  # spouts only: the last next_tuple emitted nothing
    ready: bool = False  # initialized (and, for a SparkBolt, its SparkSession is up)
    latency: CompleteLatency | None = None  # spouts: their complete latency
    execute_ms: float = 0.0  # time in execute, over every executed input
    process_ms: float = 0.0  # summed process latency, over every executed input
    spark: SparkFigures | None = None  # SparkBolts only
    started: float = field(default_factory=time.monotonic)
    rolling: RollingWindows | None = None
    execute_histogram: Recorder = field(default_factory=Recorder)
    process_histogram: Recorder = field(default_factory=Recorder)

    def __post_init__(self) -> None:
        if self.rolling is None:
            self.rolling = RollingWindows(self.started)

    def executed_batch(self, rows: int, execute_secs: float, failed: int = 0) -> None:
        """`rows` inputs executed in `execute_secs` together, `failed` of them failed and
        the others acked (a BasicBolt's); counted before their acks leave, so whoever sees
        an ack sees it counted."""
        self.executed += rows
        self.execute_ms += execute_secs * 1000
        if rows > 0:
            self.execute_histogram.record(execute_secs * 1000 / rows, rows)
        self.acked += rows - failed
        self.failed += failed

    def processed_batch(self, rows: int, execute_secs: float, done_secs: float) -> None:
        """The acks of a batch of `rows` inputs that took `execute_secs` left `done_secs`
        after the first one started (see the module's process latency)."""
        if rows > 0:
            spread = execute_secs * (rows - 1) / (2 * rows)  # mean start after the first
            mean_ms = max(done_secs - spread, execute_secs / rows) * 1000
            self.process_ms += rows * mean_ms
            self.process_histogram.record(mean_ms, rows)

    def spark_job(self, rows: int, job_secs: float, ok: bool = True) -> None:
        """One micro-batch of `rows` took `job_secs` in Spark (its process latency comes
        with `processed_batch(rows, 0.0, done)`: all its rows start together)."""
        if self.spark is None:
            self.spark = SparkFigures()
        self.spark.jobs += 1
        self.spark.rows += rows
        self.spark.job_ms += job_secs * 1000
        self.executed_batch(rows, job_secs, 0 if ok else rows)

    def figures(self) -> Figures:
        """The cumulative counters windows are made of."""
        out: Figures = {
            "emitted": dict(self.emitted),
            "transferred": dict(self.transferred),
            "executed": self.executed,
            "acked": self.acked,
            "failed": self.failed,
            "execute_ms": round(self.execute_ms, 3),
            "process_ms": round(self.process_ms, 3),
        }
        if self.latency is not None:
            out["complete"] = {
                "count": self.latency.count,
                "total_ms": round(self.latency.total_ms, 3),
            }
        if self.spark is not None:
            out["spark"] = {
                "jobs": self.spark.jobs,
                "rows": self.spark.rows,
                "job_ms": round(self.spark.job_ms, 3),
            }
        return out

    def snapshot(self, now: float | None = None) -> dict[str, Any]:
        """The task's entry in the heartbeat: all-time figures at the top level (with
        `secs` since the task started) and one entry per window under "windows"."""
        now = time.monotonic() if now is None else now
        figures = self.figures()
        assert self.rolling is not None
        windows = {
            key: _complete_ms(entry) for key, entry in self.rolling.windows(now, figures).items()
        }
        self.rolling.record(now, figures)  # after: a window never measures from `now` itself
        return {
            **{key: value for key, value in figures.items() if key != "complete"},
            "errors": self.errors,
            "pending": self.pending,
            "idle": self.idle,
            "ready": self.ready,
            "secs": round(max(now - self.started, 0.0), 3),
            "windows": windows,
            **self._complete_ms(),
            **self._histograms(),
        }

    def _histograms(self) -> dict[str, Any]:
        """The beat's "histograms": name -> compact histogram, only those with counts."""
        recorders = {"execute": self.execute_histogram, "process": self.process_histogram}
        if self.latency is not None:
            recorders["complete"] = self.latency.histogram
        encoded = {name: r.encode() for name, r in recorders.items()}
        found = {name: h for name, h in encoded.items() if h is not None}
        return {"histograms": found} if found else {}

    def _complete_ms(self) -> dict[str, Any]:
        summary = self.latency.summary() if self.latency is not None else None
        return {} if summary is None else {"complete_ms": summary}


def _complete_ms(entry: Figures) -> Figures:
    """A window's complete latency as nimbus reads it: {"count", "avg"}, or none."""
    complete = entry.pop("complete", None) or {}
    count = complete.get("count", 0)
    if count > 0:
        entry["complete_ms"] = {"count": count, "avg": round(complete["total_ms"] / count, 3)}
    return entry
