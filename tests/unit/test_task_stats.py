"""A task's figures: rolling windows made from cumulative counters, latencies, capacity."""

from __future__ import annotations

import pytest

from squall.components import Bolt, TaskContext, Tuple
from squall.worker.bolt_executor import BoltExecutor
from squall.worker.latency import CompleteLatency
from squall.worker.task_stats import BUCKETS, RollingWindows, TaskStats, difference
from tests.unit.recording_io import RecordingIO


def test_difference_is_key_by_key_and_nested():
    now = {"emitted": {"default": 9, "other": 2}, "executed": 7, "execute_ms": 3.5}
    then = {"emitted": {"default": 4}, "executed": 7}
    assert difference(now, then) == {
        "emitted": {"default": 5, "other": 2},
        "executed": 0,
        "execute_ms": 3.5,
    }


def test_a_window_counts_only_what_happened_inside_it():
    rolling = RollingWindows(started=0.0, windows=(600,), buckets=20)  # a mark per 30 s
    for t in range(0, 1201, 3):  # a heartbeat every 3 s, one tuple a second
        rolling.record(float(t), {"executed": t})
    window = rolling.windows(1200.0, {"executed": 1200})["600"]
    assert window["secs"] == 600 and window["executed"] == 600


def test_a_young_window_counts_everything_since_the_start():
    rolling = RollingWindows(started=100.0, windows=(600, 10800))
    rolling.record(130.0, {"executed": 5})
    windows = rolling.windows(160.0, {"executed": 8})
    assert windows["600"] == {"executed": 8, "secs": 60.0}
    assert windows["10800"] == {"executed": 8, "secs": 60.0}


def test_marks_are_bounded_and_a_window_is_exact_to_a_bucket():
    rolling = RollingWindows(started=0.0, windows=(600,), buckets=BUCKETS)
    for t in range(0, 5000):
        rolling.record(float(t), {"executed": t})
    assert len(rolling.marks[600]) == BUCKETS + 1
    window = rolling.windows(4999.0, {"executed": 4999})["600"]
    assert 600 - 600 / BUCKETS <= window["secs"] <= 600
    assert window["executed"] == window["secs"]


def test_after_a_silence_longer_than_the_window_the_newest_mark_is_used():
    rolling = RollingWindows(started=0.0, windows=(600,))
    rolling.record(30.0, {"executed": 10})
    window = rolling.windows(2000.0, {"executed": 12})["600"]
    assert window == {"executed": 2, "secs": 1970.0}  # says the span it really covers


def test_execute_and_process_latency_of_a_batch():
    stats = TaskStats(started=0.0)
    # four inputs executed in 0.4 s together; their acks left 0.5 s after the first began
    stats.executed_batch(4, 0.4)
    stats.processed_batch(4, 0.4, 0.5)
    assert stats.executed == 4
    assert stats.execute_ms == pytest.approx(400.0)  # 100 ms an input
    # evenly spread starts: 0, .1, .2, .3 s; acks at .5 s: 500 + 400 + 300 + 200 ms
    assert stats.process_ms == pytest.approx(1400.0)
    assert stats.process_ms / stats.executed >= stats.execute_ms / stats.executed


def test_spark_jobs_count_rows_and_time():
    stats = TaskStats(started=0.0)
    stats.spark_job(100, 2.0)
    stats.processed_batch(100, 0.0, 2.5)
    stats.spark_job(50, 1.0)
    snap = stats.snapshot(now=10.0)
    assert snap["spark"] == {"jobs": 2, "rows": 150, "job_ms": 3000.0}
    assert snap["executed"] == 150 and snap["execute_ms"] == 3000.0
    assert snap["process_ms"] == 250000.0  # 100 rows acked 2.5 s after their job began


def test_snapshot_carries_all_time_and_every_window():
    stats = TaskStats(started=0.0)
    stats.emitted["default"] += 3
    stats.executed_batch(3, 0.003)
    first = stats.snapshot(now=40.0)
    assert first["secs"] == 40.0 and first["executed"] == 3
    assert set(first["windows"]) == {"600", "10800", "86400"}
    stats.emitted["default"] += 2
    stats.executed_batch(2, 0.002)
    later = stats.snapshot(now=700.0)
    ten = later["windows"]["600"]
    # the mark at 40 s is the oldest inside the 600 s window: only what came after it
    assert ten["emitted"] == {"default": 2} and ten["executed"] == 2 and ten["secs"] == 660.0
    assert later["windows"]["86400"]["executed"] == later["executed"] == 5
    capacity = ten["execute_ms"] / (ten["secs"] * 1000)
    assert 0 < capacity < 1e-5


def test_windowed_complete_latency():
    stats = TaskStats(started=0.0, latency=CompleteLatency())
    for ms in (10.0, 20.0):
        stats.latency.add(ms)  # type: ignore[union-attr]
    snap = stats.snapshot(now=5.0)
    assert snap["windows"]["600"]["complete_ms"] == {"count": 2, "avg": 15.0}
    assert snap["complete_ms"]["count"] == 2 and "complete" not in snap
    assert "complete_ms" not in TaskStats(started=0.0).snapshot(now=1.0)["windows"]["600"]


def test_windowed_complete_latency_counts_only_the_window():
    stats = TaskStats(started=0.0, latency=CompleteLatency())
    stats.latency.add(1000.0)  # type: ignore[union-attr]
    stats.snapshot(now=100.0)  # a mark: one ack of 1 s so far
    stats.latency.add(10.0)  # type: ignore[union-attr]
    later = stats.snapshot(now=750.0)  # the mark at 100 s is the 600 s window's base
    assert later["windows"]["600"]["complete_ms"] == {"count": 1, "avg": 10.0}
    assert later["windows"]["10800"]["complete_ms"] == {"count": 2, "avg": 505.0}


class Picky(Bolt):
    outputs = ["w"]

    def process(self, tup):
        if tup.values[0] == "bad":
            raise ValueError("bad input")


def IO():  # noqa: N802 - reads as the class it was
    return RecordingIO()


def test_a_bolts_batch_is_counted_executed_acked_failed_and_timed():
    conf = {"topology.message.timeout.secs": 30}
    ex = BoltExecutor(
        Picky(), TaskContext("t", "b", 4, (4,), "/tmp"), {"default": ("w",)}, conf, IO()
    )
    inputs = [
        Tuple("a", 1, "default", ("x",), (v,), {100: n}) for n, v in enumerate(["ok", "bad", "ok"])
    ]
    ex.execute_all(inputs)
    stats = ex.stats
    assert (stats.executed, stats.acked, stats.failed, stats.errors) == (3, 2, 1, 1)
    assert 0 < stats.execute_ms <= stats.process_ms
    window = stats.snapshot()["windows"]["600"]
    assert (window["executed"], window["acked"], window["failed"]) == (3, 2, 1)


def test_a_bolt_failing_on_every_tuple_logs_as_many_tracebacks_as_it_reports(caplog):
    """The worker log is throttled as the error reports are (at most
    topology.max.error.report.per.interval a task per interval): a traceback per tuple
    flooded it. Every failure is still counted."""
    conf = {
        "topology.message.timeout.secs": 30,
        "topology.max.error.report.per.interval": 3,
        "topology.error.throttle.interval.secs": 600,
    }
    ex = BoltExecutor(
        Picky(), TaskContext("t", "b", 4, (4,), "/tmp"), {"default": ("w",)}, conf, IO()
    )
    inputs = [Tuple("a", 1, "default", ("x",), ("bad",), {100: n}) for n in range(50)]
    with caplog.at_level("ERROR", "squall.worker"):
        ex.execute_all(inputs)
    logged = [r for r in caplog.records if "failed in" in r.getMessage()]
    assert len(logged) == 3 and "ValueError: bad input" in logged[0].getMessage()
    assert ex.stats.errors == 50
