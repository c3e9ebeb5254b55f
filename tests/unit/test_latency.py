"""Complete latency figures: count of all acks, avg/p50/p99 over the latest window."""

from squall.latency_histogram import Recorder
from squall.worker.latency import CompleteLatency, quantile


def test_nearest_rank_quantiles():
    values = [float(v) for v in range(1, 101)]
    assert quantile(values, 0.5) == 50.0
    assert quantile(values, 0.99) == 99.0
    assert quantile(values[:10], 0.99) == 10.0
    assert quantile([7.0], 0.5) == quantile([7.0], 0.99) == 7.0
    assert quantile([1.0, 2.0], 0.5) == 1.0


def test_summary_over_a_window_and_count_over_all():
    lat = CompleteLatency(window=4)
    assert lat.summary() is None
    for ms in (100.0, 1.0, 2.0, 3.0, 4.0, -1.0):  # a clock step backwards counts as 0
        lat.add(ms)
    assert lat.summary() == {"count": 6, "avg": 2.25, "p50": 2.0, "p99": 4.0}


def test_a_wake_ups_acks_added_at_once_count_as_added_one_by_one():
    values = [100.0, 1.0, 0.004, -1.0, 2.5, 30_000.0, 7e9]
    one, many = CompleteLatency(window=4), CompleteLatency(window=4)
    for ms in values:
        one.add(ms)
    many.add_many(values[:3])
    many.add_many(values[3:])
    assert many.summary() == one.summary() and many.count == 7
    assert many.histogram.encode() == one.histogram.encode()
    assert many.total_ms == one.total_ms == sum(v for v in values if v > 0)
    reference = Recorder()  # the histogram's own per-latency path
    for ms in values:
        reference.record(ms)
    assert many.histogram.encode() == reference.encode()
