"""Complete latency figures: count of all acks, avg/p50/p99 over the latest window."""

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
