"""Nimbus's side of the windowed task figures: per-window totals, execute and process
latency weighted by executions, capacity as the busiest task's, the window a page asks for,
Storm's per-window ExecutorStats, and junk in a heartbeat counted as nothing."""

import math

import pytest

from squall import thrift_api as T
from squall.nimbus.reads.component_stats import ExecutorRow, aggregate_stats, totals
from squall.nimbus.reads.page_info import TopologyFacts, component_page, topology_page
from squall.nimbus.reads.summaries import topology_info
from squall.nimbus.reads.task_figures import capacity, window_of
from squall.records import Assignment, StormBase, WorkerBeat

NOW = 10_000
SLOT = ("s1", 6700)


def task(executed, execute_ms, process_ms, secs, window=None, **more):
    """A bolt task's beat entry: all-time figures, and `window` for "600" if given."""
    out = {
        "executed": executed,
        "execute_ms": execute_ms,
        "process_ms": process_ms,
        "secs": secs,
        "acked": executed,
        "emitted": {"default": executed},
        **more,
    }
    if window is not None:
        out["windows"] = {"600": window}
    return out


def row(n, stats):
    return ExecutorRow(n, "count", SLOT, "h", 5, stats)


def test_latencies_are_weighted_by_executions_and_capacity_is_the_busiest_tasks():
    rows = [
        row(1, task(100, 100.0, 300.0, 10.0, window=task(100, 100.0, 300.0, 10.0))),  # 1 %
        row(2, task(300, 900.0, 1200.0, 10.0, window=task(300, 900.0, 1200.0, 10.0))),  # 9 %
    ]
    t = totals(rows, include_sys=False)
    assert t.executed == 400
    assert math.isclose(t.execute_ms, 1000.0 / 400) and math.isclose(t.process_ms, 1500.0 / 400)
    assert math.isclose(t.capacity, 0.09)
    bolt = aggregate_stats("bolt", t).specific_stats.bolt
    assert (bolt.executed, bolt.capacity) == (400, t.capacity)
    assert math.isclose(bolt.execute_latency_ms, 2.5) and math.isclose(
        bolt.process_latency_ms, 3.75
    )


def test_a_window_is_read_from_its_entry_and_its_own_span():
    ten = task(10, 50.0, 60.0, 600.0)
    stats = task(1000, 2000.0, 2500.0, 3600.0, window=ten)
    assert window_of(stats, ":all-time") is stats and window_of(stats, "600") is ten
    assert window_of(stats, "10800") == {}  # a window the beat does not carry counts nothing
    t = totals([row(1, stats)], False, "600")
    assert (t.executed, t.acked, t.emitted) == (10, 10, 10)
    assert math.isclose(t.execute_ms, 5.0) and math.isclose(t.capacity, 50.0 / 600_000)
    # capacity is Storm's: the last 10 minutes', whatever window the figures are for
    assert totals([row(1, stats)], False).capacity == t.capacity
    assert totals([row(1, task(9, 9.0, 9.0, 10.0))], False).capacity is None  # no 600 entry


@pytest.mark.parametrize(
    "junk",
    [
        {"windows": "x"},
        {"windows": {"600": [1, 2]}},
        {"windows": {"600": task(-5, "x", float("nan"), 0)}},
        {"windows": {"600": task(5, -1.0, float("inf"), -3)}},
        {"windows": {"600": task(True, 1e30, 1.0, 1e30)}},
    ],
)
def test_junk_in_a_beat_counts_as_nothing_and_never_raises(junk):
    t = totals([row(1, {**task(4, 8.0, 8.0, 10.0), **junk})], False, "600")
    assert t.execute_ms is None or t.executed > 0
    assert t.capacity is None or 0 <= t.capacity <= 1e6
    bolt = aggregate_stats("bolt", t).specific_stats.bolt
    for value in (bolt.execute_latency_ms, bolt.process_latency_ms, bolt.capacity):
        assert value is None or (math.isfinite(value) and value >= 0)


def test_unmeasured_is_unset_not_zero():
    old = {"executed": 9, "emitted": {"default": 9}}  # a worker from before these figures
    t = totals([row(1, old)], False)
    assert (t.execute_ms, t.process_ms, t.capacity) == (None, None, None)
    assert capacity({"executed": 0, "execute_ms": 0.0, "secs": 5.0}) is None


BASE = StormBase("wc", "active", NOW - 100, 1, {"words": 1, "count": 1})
TASKS = {1: "words", 2: "count"}
ASSIGNMENT = Assignment(1, "t", {"s1": "h1"}, {1: SLOT, 2: SLOT}, {1: NOW - 50, 2: NOW - 50})
SPOUT = {
    "emitted": {"default": 50},
    "acked": 40,
    "complete_ms": {"count": 40, "avg": 7.0, "p50": 6.0, "p99": 20.0},
    "windows": {
        "600": {"emitted": {"default": 5}, "acked": 4, "complete_ms": {"count": 4, "avg": 3.0}}
    },
}
BOLT = task(50, 100.0, 150.0, 40.0, window=task(5, 20.0, 25.0, 40.0))
BEAT = WorkerBeat(seq=3, time_secs=NOW, uptime_secs=40, tasks={1: SPOUT, 2: BOLT})
FACTS = TopologyFacts(
    "t", BASE, TASKS, ASSIGNMENT, {SLOT: BEAT}, kinds={"words": "spout", "count": "bolt"}
)


def test_pages_serve_the_window_asked_for_and_every_windows_totals():
    ten = topology_page(FACTS, False, NOW, "600")
    assert ten.id_to_spout_agg_stats["words"].common_stats.acked == 4
    assert ten.id_to_spout_agg_stats["words"].specific_stats.spout.complete_latency_ms == 3.0
    assert ten.id_to_bolt_agg_stats["count"].specific_stats.bolt.execute_latency_ms == 4.0
    assert ten.topology_stats.window_to_acked == {"600": 4, "10800": 0, "86400": 0, ":all-time": 40}
    assert ten.topology_stats.window_to_complete_latencies_ms == {"600": 3.0, ":all-time": 7.0}
    assert topology_page(FACTS, False, NOW).id_to_spout_agg_stats["words"].common_stats.acked == 40
    page = component_page(FACTS, "count", False, NOW, "600")
    assert set(page.window_to_stats) == {"600", "10800", "86400", ":all-time"}
    assert page.window_to_stats[":all-time"].specific_stats.bolt.executed == 50
    [executor] = page.exec_stats
    assert executor.stats.specific_stats.bolt.executed == 5  # the window asked for
    assert math.isclose(executor.stats.specific_stats.bolt.capacity, 20.0 / 40_000)


def test_executor_stats_per_window_with_storms_keys():
    info = topology_info(
        "t",
        BASE,
        ASSIGNMENT,
        TASKS,
        {SLOT: BEAT},
        {},
        NOW,
        spouts=frozenset({"words"}),
        sole_inputs={"count": ("words", "default")},
    )
    spout, bolt = (e.stats for e in info.executors)
    assert spout.emitted["600"] == {"default": 5} and spout.emitted[":all-time"] == {"default": 50}
    assert spout.specific.spout.acked["600"] == {"default": 4}
    assert spout.specific.spout.complete_ms_avg["600"] == {"default": 3.0}
    key = T.GlobalStreamId("words", "default")
    assert bolt.specific.bolt.executed == {
        "600": {key: 5},
        "10800": {key: 0},
        "86400": {key: 0},
        ":all-time": {key: 50},
    }
    assert bolt.specific.bolt.execute_ms_avg["600"] == {key: 4.0}
    assert bolt.specific.bolt.process_ms_avg[":all-time"] == {key: 3.0}
    assert bolt.specific.bolt.execute_ms_avg["10800"] == {}  # nothing executed: unmeasured


def test_a_sparkbolts_micro_batches_are_summed_and_junk_left_out():
    from squall.ui.topology_json import bolt_json

    rows = [
        row(1, task(300, 900.0, 1000.0, 60.0, spark={"jobs": 2, "rows": 300, "job_ms": 900.0})),
        row(2, task(100, 100.0, 100.0, 60.0, spark={"jobs": 1, "rows": 100, "job_ms": 100.0})),
        row(3, task(5, 1.0, 1.0, 60.0, spark={"jobs": "x", "rows": 5, "job_ms": 1.0})),
    ]
    bolt = aggregate_stats("bolt", totals(rows, False)).specific_stats.bolt
    assert (bolt.spark_jobs, bolt.spark_rows) == (3, 400)
    assert math.isclose(bolt.spark_job_ms, 1000.0 / 3)
    shown = bolt_json("b", aggregate_stats("bolt", totals(rows, False)), NOW)
    assert (shown["sparkJobs"], shown["sparkRows"], shown["sparkJobLatency"]) == (3, 400, "333.333")
    plain = aggregate_stats("bolt", totals([row(1, task(3, 1.0, 1.0, 9.0))], False))
    assert plain.specific_stats.bolt.spark_jobs is None  # not a SparkBolt: no such fields
    assert "sparkJobs" not in bolt_json("b", plain, NOW)
