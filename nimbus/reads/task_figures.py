"""Reading one task's figures out of its worker's heartbeat, per Storm window.

A worker's beat carries, per task (worker/task_stats.py), all-time figures at the top level
and one entry per window under "windows" ("600", "10800", "86400"), each with the same keys
plus `secs`, the span it covers. Heartbeats can be written by anyone able to write ZooKeeper,
so every reader here is total: a value that is not what it should be counts as nothing
(0 for a counter, unmeasured for a latency), a sum stays inside i64, and junk never raises.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from squall.latency_histogram import Histogram, decode

ALL_TIME = ":all-time"
WINDOWS = ("600", "10800", "86400", ALL_TIME)  # Storm's window keys, shortest first
I64_MAX = 2**63 - 1
_LATEST = 1e12  # ms: past any real latency or window, so junk


def count(value: Any) -> int:
    if isinstance(value, bool) or not isinstance(value, int):
        return 0
    return max(0, min(value, I64_MAX))


def millis(value: Any) -> float | None:
    """A finite, non-negative number of ms (or seconds) below 1e12; None for anything else."""
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        return None
    return float(value) if 0 <= value < _LATEST else None  # NaN fails this too


def window_of(stats: Mapping[str, Any] | None, window: str) -> Mapping[str, Any]:
    """The task's figures for `window`: the top level for all-time, else its entry under
    "windows"; {} (nothing counted) when the beat has none or it is junk."""
    if not isinstance(stats, Mapping):
        return {}
    if window == ALL_TIME:
        return stats
    windows = stats.get("windows")
    entry = windows.get(window) if isinstance(windows, Mapping) else None
    return entry if isinstance(entry, Mapping) else {}


def complete_ms(raw: Any) -> dict[str, float] | None:
    """A spout task's complete latency (`{"count", "avg"}`, all-time ones also "p50" and
    "p99", ms), or None when absent or junk: a count that is not a positive integer or a
    figure that is not a finite, non-negative number leaves the whole entry out."""
    if not isinstance(raw, Mapping) or count(raw.get("count")) <= 0:
        return None
    out: dict[str, float] = {"count": float(count(raw["count"]))}
    for key in ("avg", "p50", "p99"):
        if key == "avg" or key in raw:
            value = raw.get(key)
            if isinstance(value, bool) or not isinstance(value, (int, float)):
                return None
            if not 0 <= value < float("inf"):
                return None
            out[key] = float(value)
    return out


def complete_latency(raw: Any) -> tuple[int, float]:
    """A beat's "complete_ms" as (count, count * avg); (0, 0.0) for what `complete_ms`
    leaves out and for an average past any real latency."""
    figures = complete_ms(raw)
    if figures is None or figures["avg"] > _LATEST:
        return 0, 0.0
    return int(figures["count"]), figures["count"] * figures["avg"]


def stream_counts(raw: Any) -> dict[str, int]:
    """A heartbeat's stream -> count map; anything but a stream name and a count that fits
    Thrift's i64 is left out (heartbeats are written by anyone who can write ZooKeeper)."""
    if not isinstance(raw, Mapping):
        return {}
    return {
        k: v
        for k, v in raw.items()
        if isinstance(k, str)
        and isinstance(v, int)
        and not isinstance(v, bool)
        and 0 <= v <= I64_MAX
    }


def busy_ms(figures: Mapping[str, Any], key: str) -> float:
    """Summed execute or process time ("execute_ms", "process_ms") of a task's figures; 0.0
    when junk or when nothing was executed (a time without executions says nothing)."""
    if count(figures.get("executed")) <= 0:
        return 0.0
    return millis(figures.get(key)) or 0.0


def capacity(figures: Mapping[str, Any]) -> float | None:
    """Storm's capacity of one task: time in execute / the window's length (`secs`, the
    span the figures cover); None when nothing was executed or the span is unknown."""
    secs = millis(figures.get("secs"))
    executing = busy_ms(figures, "execute_ms")
    if not secs or count(figures.get("executed")) <= 0:
        return None
    return min(executing / (secs * 1000), 1e6)


def average(total: float, n: int) -> float | None:
    return total / n if n > 0 else None


def spark(figures: Mapping[str, Any]) -> tuple[int, int, float]:
    """A SparkBolt task's (jobs, rows, job ms) from its figures' "spark"; zeros when absent
    or junk."""
    raw = figures.get("spark")
    if not isinstance(raw, Mapping) or count(raw.get("jobs")) <= 0:
        return 0, 0, 0.0
    return count(raw["jobs"]), count(raw.get("rows")), millis(raw.get("job_ms")) or 0.0


def latency_histograms(figures: Mapping[str, Any]) -> dict[str, Histogram | None]:
    """A task's all-time latency histograms ("complete", "execute", "process") from its
    beat's "histograms"; junk ones are left out (squall/latency_histogram.py decode)."""
    raw = figures.get("histograms")
    if not isinstance(raw, Mapping):
        return {}
    return {name: decode(raw.get(name)) for name in ("complete", "execute", "process")}
