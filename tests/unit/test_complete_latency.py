"""Nimbus's side of complete latency for the UI pages: spout tasks' "complete_ms" from their
heartbeats become the component's count-weighted average; what no worker measured stays
unset (never 0.0), and junk in a heartbeat counts as unmeasured."""

import math

from squall.nimbus.reads.component_stats import (
    BOLT,
    SPOUT,
    ExecutorRow,
    aggregate_stats,
    complete_latency,
    totals,
)


def _row(task: int, stats: dict) -> ExecutorRow:
    return ExecutorRow(task, "spout", ("s1", 6700), "h", 5, stats)


def test_weighted_average_over_tasks():
    rows = [
        _row(1, {"acked": 3, "complete_ms": {"count": 3, "avg": 10.0, "p50": 9, "p99": 20}}),
        _row(2, {"acked": 1, "complete_ms": {"count": 1, "avg": 50.0, "p50": 50, "p99": 50}}),
        _row(3, {"acked": 0}),  # a task with no measurement yet (P's workers before the change)
    ]
    t = totals(rows, include_sys=False)
    assert t.complete_count == 4 and math.isclose(t.complete_ms, 20.0)
    spout = aggregate_stats(SPOUT, t).specific_stats.spout
    assert math.isclose(spout.complete_latency_ms, 20.0)


def test_unmeasured_stays_unset():
    t = totals([_row(1, {"acked": 5})], include_sys=False)
    assert t.complete_ms is None
    assert aggregate_stats(SPOUT, t).specific_stats.spout.complete_latency_ms is None
    bolt = aggregate_stats(BOLT, t).specific_stats.bolt
    assert (bolt.execute_latency_ms, bolt.process_latency_ms, bolt.capacity) == (None,) * 3


def test_junk_counts_as_unmeasured():
    for junk in (
        None,
        "fast",
        {"count": 2},
        {"count": "2", "avg": 1.0},
        {"count": 2, "avg": float("nan")},
        {"count": 2, "avg": float("inf")},
        {"count": 2, "avg": -1.0},
        {"count": 2, "avg": True},
        {"count": 0, "avg": 5.0},
    ):
        assert complete_latency(junk) == (0, 0.0), junk
