"""Latency histograms with fixed bucket bounds, shared by workers (which count), nimbus (which
merges tasks into components) and the UI (which serves them to Prometheus).

Prometheus histograms are cumulative and never reset, so a task counts every latency since
it started into one of a fixed set of buckets; any two scrapes then give the distribution in
between (`rate(..._bucket[5m])`). The bounds are chosen once for every task and every
version, because buckets with different bounds cannot be added up: from 10 us (a bolt's
execute latency per input is often far below 1 ms) to 30 s (a complete latency at Storm's
default message timeout), in Prometheus's 1 - 2.5 - 5 steps.

On the hot path a record is one bisect into a 20-entry tuple and two additions; nothing is
allocated per observation. A heartbeat carries a histogram compactly as one JSON list,
`[sum_ms, count_0, count_1, ...]` with per-bucket (not cumulative) counts and the trailing
empty buckets left off: a bolt whose inputs all take under 1 ms sends 8 numbers, not 22.
"""

from __future__ import annotations

import math
from bisect import bisect_left
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import Any

# Upper bounds in ms, each bucket counting latencies <= its bound (Prometheus's `le`); the
# last bucket, beyond BOUNDS_MS[-1], is +Inf.
BOUNDS_MS: tuple[float, ...] = (
    0.01,
    0.025,
    0.05,
    0.1,
    0.25,
    0.5,
    1.0,
    2.5,
    5.0,
    10.0,
    25.0,
    50.0,
    100.0,
    250.0,
    500.0,
    1000.0,
    2500.0,
    5000.0,
    10000.0,
    30000.0,
)
NUM_BUCKETS = len(BOUNDS_MS) + 1  # the last is +Inf
I64_MAX = 2**63 - 1
_MAX_SUM_MS = 1e18  # a sum past this is junk (or centuries of latency): dropped


class Recorder:
    """One task's cumulative histogram, written by the task's thread; `encode` is read by
    the heartbeat thread (a copy of a list of ints, consistent enough under the GIL: the
    sum may be one batch ahead of the buckets)."""

    __slots__ = ("counts", "sum_ms")

    def __init__(self) -> None:
        self.counts = [0] * NUM_BUCKETS
        self.sum_ms = 0.0

    def record(self, ms: float, n: int = 1) -> None:
        """`n` latencies of `ms` each (a batch whose inputs share one measured mean)."""
        if ms < 0:  # a clock step backwards: counts as 0, as the averages do
            ms = 0.0
        self.counts[bisect_left(BOUNDS_MS, ms)] += n
        self.sum_ms += ms * n

    def record_each(self, values: list[float], total: float) -> None:
        """`record` of each of `values` (none negative; `total` their sum), in one call."""
        counts = self.counts
        for ms in values:
            counts[bisect_left(BOUNDS_MS, ms)] += 1
        self.sum_ms += total

    @property
    def count(self) -> int:
        return sum(self.counts)

    def encode(self) -> list[float] | None:
        """The heartbeat's compact form; None while nothing was recorded."""
        counts = list(self.counts)
        last = max((i for i, c in enumerate(counts) if c), default=-1)
        if last < 0:
            return None
        return [round(self.sum_ms, 3), *counts[: last + 1]]


@dataclass(frozen=True)
class Histogram:
    """Per-bucket counts (NUM_BUCKETS of them, the last +Inf) and the sum of the latencies."""

    counts: tuple[int, ...]
    sum_ms: float

    @property
    def count(self) -> int:
        return sum(self.counts)

    def cumulative(self) -> list[tuple[float, int]]:
        return cumulative(BOUNDS_MS, self.counts)


def cumulative(bounds_ms: Sequence[float], counts: Sequence[int]) -> list[tuple[float, int]]:
    """(upper bound in ms, count <= it) per bucket, ending with (inf, all counts): the shape
    of Prometheus's _bucket samples. `counts` has one more entry than `bounds_ms` (+Inf);
    lists of other lengths (a foreign client's) still end in +Inf == the total count."""
    out, running = [], 0
    for bound, n in zip(bounds_ms, counts[: len(bounds_ms)], strict=False):
        running += n
        out.append((bound, running))
    out.append((math.inf, sum(counts)))
    return out


def decode(raw: Any) -> Histogram | None:
    """A heartbeat's compact histogram, or None when absent or junk (heartbeats are written
    by anyone who can write ZooKeeper): a list of a finite non-negative sum and at most
    NUM_BUCKETS counts that are non-negative integers within i64, at least one positive."""
    if not isinstance(raw, list) or not 2 <= len(raw) <= NUM_BUCKETS + 1:
        return None
    total, *counts = raw
    if isinstance(total, bool) or not isinstance(total, (int, float)):
        return None
    if not 0 <= total < _MAX_SUM_MS:  # NaN fails this too
        return None
    for n in counts:
        if isinstance(n, bool) or not isinstance(n, int) or not 0 <= n <= I64_MAX:
            return None
    if not any(counts):
        return None
    padded = (*counts, *([0] * (NUM_BUCKETS - len(counts))))
    return Histogram(counts=padded, sum_ms=float(total))


def merge(histograms: Iterable[Histogram | None]) -> Histogram | None:
    """Bucket-wise sums (each within i64) of the histograms there are; None when none is."""
    present = [h for h in histograms if h is not None]
    if not present:
        return None
    columns = zip(*(h.counts for h in present), strict=True)  # all NUM_BUCKETS long
    counts = tuple(min(sum(column), I64_MAX) for column in columns)
    return Histogram(counts=counts, sum_ms=sum(h.sum_ms for h in present))
