"""Complete latency of one spout task (Storm's complete latency: from a tracked tuple's emit
to its tree's ack), as the heartbeat reports it: `{"count", "avg", "p50", "p99"}` in ms.

`count` is every ack since the task started; avg, p50 and p99 are over the latest WINDOW
acks, so the figures say how the topology does now, not averaged over its whole life, and
memory stays fixed whatever the rate. Pure: the caller measures the time and passes it in.
The summary sorts the window, so it is made when a heartbeat reads it, not per ack.
`histogram` counts every ack into fixed buckets (squall/latency_histogram.py), for the
Prometheus histogram the UI serves.
"""

from __future__ import annotations

from collections import deque
from typing import Any

from squall.latency_histogram import Recorder

WINDOW = 4096


class CompleteLatency:
    def __init__(self, window: int = WINDOW) -> None:
        self.count = 0
        self.total_ms = 0.0  # every ack's, for windowed averages (task_stats)
        self.recent: deque[float] = deque(maxlen=window)
        self.histogram = Recorder()

    def add(self, ms: float) -> None:
        self.add_many([ms])

    def add_many(self, values: list[float]) -> None:
        """`add` for each of `values` (a wake-up's acks), in one call."""
        values = [ms if ms > 0.0 else 0.0 for ms in values]
        self.count += len(values)
        total = sum(values)
        self.total_ms += total
        self.recent.extend(values)
        self.histogram.record_each(values, total)

    def summary(self) -> dict[str, Any] | None:
        """The heartbeat's `complete_ms`; None before the first ack."""
        if not self.recent:
            return None
        ordered = sorted(list(self.recent))  # a copy: a heartbeat thread reads it
        return {
            "count": self.count,
            "avg": round(sum(ordered) / len(ordered), 3),
            "p50": round(quantile(ordered, 0.5), 3),
            "p99": round(quantile(ordered, 0.99), 3),
        }


def quantile(ordered: list[float], q: float) -> float:
    """The nearest-rank quantile of a sorted, non-empty list: the smallest value with at
    least q of the values at or below it."""
    rank = max(1, -(-int(q * 1000) * len(ordered) // 1000))  # ceil(q * n), in integers
    return ordered[min(rank, len(ordered)) - 1]
