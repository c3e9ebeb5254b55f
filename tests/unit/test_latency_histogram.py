"""Latency histograms (#13 item 4): recording into fixed buckets (boundaries, +Inf), the
heartbeat's compact form and its junk, merging a component's tasks, nimbus's Thrift field,
and /metrics' Prometheus histograms (cumulative, ending in +Inf == _count, in seconds)."""

from __future__ import annotations

import math
from pathlib import Path

import pytest
import thriftpy2
from prometheus_client import CollectorRegistry, generate_latest
from prometheus_client.parser import text_string_to_metric_families
from thriftpy2.utils import deserialize, serialize

from squall import latency_histogram as H
from squall.nimbus.reads.page_info import TopologyFacts, topology_page
from squall.records import Assignment, StormBase, WorkerBeat
from squall.ui.metrics import topology_metrics
from squall.worker.latency import CompleteLatency
from squall.worker.task_stats import TaskStats

STORM2_IDL = Path(__file__).resolve().parents[1] / "storm_idl" / "storm2.thrift"


def bucket_of(ms: float) -> int:
    recorder = H.Recorder()
    recorder.record(ms)
    return recorder.counts.index(1)


def test_a_latency_on_a_bound_counts_in_that_bucket_and_above_the_last_in_inf():
    assert bucket_of(0.0) == 0 and bucket_of(-5.0) == 0  # a clock step backwards: 0
    assert bucket_of(0.01) == 0  # Prometheus's le: bound included
    assert bucket_of(0.0100001) == 1
    assert bucket_of(1.0) == H.BOUNDS_MS.index(1.0)
    assert bucket_of(30000.0) == H.NUM_BUCKETS - 2
    assert bucket_of(30000.5) == H.NUM_BUCKETS - 1 == len(H.BOUNDS_MS)  # +Inf
    assert bucket_of(math.inf) == H.NUM_BUCKETS - 1


def test_recording_is_cumulative_and_encoded_compactly():
    recorder = H.Recorder()
    assert recorder.encode() is None  # nothing recorded: nothing in the beat
    recorder.record(0.02, 10)  # a batch of 10 inputs, 0.02 ms each
    recorder.record(3.0)
    recorder.record(0.02, 5)
    assert recorder.count == 16
    assert recorder.encode() == [0.3 + 3.0, 0, 15, 0, 0, 0, 0, 0, 0, 1]  # stops at 5 ms
    decoded = H.decode(recorder.encode())
    assert decoded is not None and decoded.count == 16 and len(decoded.counts) == H.NUM_BUCKETS
    assert decoded.sum_ms == pytest.approx(3.3)


def test_cumulative_buckets_end_in_inf_equal_to_the_count():
    h = H.Histogram(counts=(1, 0, 2, *([0] * (H.NUM_BUCKETS - 4)), 4), sum_ms=1e6)
    buckets = h.cumulative()
    assert buckets[0] == (0.01, 1) and buckets[2] == (0.05, 3) and buckets[-2] == (30000.0, 3)
    assert buckets[-1] == (math.inf, 7) == (math.inf, h.count)
    assert all(a[1] <= b[1] for a, b in zip(buckets, buckets[1:], strict=False))
    # a foreign client's lists of the wrong length still end in +Inf == every count
    assert H.cumulative([1.0], [2, 3, 4]) == [(1.0, 2), (math.inf, 9)]
    assert H.cumulative([1.0, 2.0], [2]) == [(1.0, 2), (math.inf, 2)]


@pytest.mark.parametrize(
    "junk",
    [
        None,
        "1,2",
        [],
        [1.0],  # a sum without buckets
        [1.0, 0, 0],  # nothing counted
        [-1.0, 1],
        [float("nan"), 1],
        [1e300, 1],
        [True, 1],
        [1.0, 1.5],
        [1.0, -1],
        [1.0, True],
        [1.0, 2**63],
        [1.0, *([1] * (H.NUM_BUCKETS + 1))],  # more buckets than there are
    ],
)
def test_junk_in_a_beat_is_no_histogram(junk):
    assert H.decode(junk) is None


def test_merging_sums_bucket_by_bucket_within_i64():
    a = H.decode([2.0, 1, 0, 3])
    b = H.decode([5.0, 0, 2, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 2**63 - 1])
    merged = H.merge([a, None, b])
    assert merged is not None
    assert merged.counts[:4] == (1, 2, 3, 0) and merged.counts[-1] == 2**63 - 1
    assert merged.sum_ms == 7.0 and merged.count == 6 + 2**63 - 1
    assert H.merge([None, None]) is None and H.merge([]) is None
    big = H.merge([b, b])
    assert big is not None and big.counts[-1] == 2**63 - 1  # capped, never past i64


def test_a_tasks_beat_carries_its_histograms_beside_the_windows():
    stats = TaskStats(started=0.0)
    assert "histograms" not in stats.snapshot(now=1.0)
    stats.executed_batch(rows=4, execute_secs=0.0002)  # 0.05 ms an input
    stats.processed_batch(rows=4, execute_secs=0.0002, done_secs=0.002)
    stats.latency = CompleteLatency()
    stats.latency.add(40.0)
    snap = stats.snapshot(now=2.0)
    hist = snap["histograms"]
    assert hist["execute"] == [0.2, 0, 0, 4]  # the 0.05 ms bucket
    assert H.decode(hist["process"]).count == 4
    assert hist["complete"] == [40.0, *([0] * 11), 1]  # the 50 ms bucket
    assert H.decode(hist["complete"]).counts[H.BOUNDS_MS.index(50.0)] == 1
    assert "histograms" not in snap["windows"]["600"]  # all-time only: Prometheus windows
    stats.executed_batch(rows=2, execute_secs=0.0001)
    assert stats.snapshot(now=3.0)["histograms"]["execute"][3] == 6  # never reset


NOW = 10_000
A, B = ("sup-a", 6700), ("sup-b", 6700)


def beat(tasks: dict) -> WorkerBeat:
    return WorkerBeat(seq=1, time_secs=NOW - 1, uptime_secs=40, tasks=tasks)


FACTS = TopologyFacts(
    id="tiny-1",
    base=StormBase("tiny", "active", NOW - 100, 2, {"numbers": 2, "sink": 2}),
    tasks={2: "numbers", 3: "numbers", 4: "sink", 5: "sink"},
    assignment=Assignment(
        epoch=1,
        code_dir="t-1",
        node_host={"sup-a": "host-a", "sup-b": "host-b"},
        task_slots={2: A, 3: B, 4: A, 5: B},
        task_start_secs={t: NOW - 50 for t in (2, 3, 4, 5)},
    ),
    beats={
        A: beat(
            {
                2: {"acked": 3, "histograms": {"complete": [30.0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 3]}},
                4: {"executed": 2, "histograms": {"execute": [0.1, 2], "process": [2.0, 0, 2]}},
            }
        ),
        B: beat(
            {
                3: {"acked": 1, "histograms": {"complete": [1e5, *([0] * 20), 1]}},
                5: {"executed": 1, "histograms": {"execute": "junk", "process": [9.0, 1]}},
            }
        ),
    },
    errors={},
    kinds={"numbers": "spout", "sink": "bolt"},
    conf={},
)


def test_nimbus_sums_a_components_tasks_for_all_time_only():
    page = topology_page(FACTS, include_sys=False, now=NOW)
    complete = page.id_to_spout_agg_stats["numbers"].specific_stats.spout
    complete = complete.complete_latency_histogram
    assert complete.upper_bounds_ms == list(H.BOUNDS_MS)
    assert complete.bucket_counts[9] == 3 and complete.bucket_counts[-1] == 1
    assert sum(complete.bucket_counts) == 4 and complete.sum_ms == 1e5 + 30.0
    bolt = page.id_to_bolt_agg_stats["sink"].specific_stats.bolt
    assert bolt.execute_latency_histogram.bucket_counts[0] == 2  # the junk task's left out
    assert bolt.process_latency_histogram.bucket_counts[:2] == [1, 2]
    assert bolt.process_latency_histogram.sum_ms == 11.0
    ten_minutes = topology_page(FACTS, include_sys=False, now=NOW, window="600")
    assert (
        ten_minutes.id_to_bolt_agg_stats["sink"].specific_stats.bolt.execute_latency_histogram
        is None
    )


def test_a_storm_client_reads_the_page_and_skips_the_histograms():
    storm = thriftpy2.load(str(STORM2_IDL), module_name="storm2_hist_thrift")
    page = topology_page(FACTS, include_sys=False, now=NOW)
    assert page.id_to_spout_agg_stats["numbers"].specific_stats.spout.complete_latency_histogram
    theirs = deserialize(storm.TopologyPageInfo(), serialize(page))
    assert theirs.id_to_bolt_agg_stats["sink"].specific_stats.bolt.executed == 3
    assert theirs.id_to_spout_agg_stats["numbers"].common_stats.acked == 4
    assert theirs.topology_stats.window_to_acked == page.topology_stats.window_to_acked
    assert (theirs.name, theirs.num_workers) == (page.name, page.num_workers)


class Pages:
    def __init__(self, pages: list) -> None:
        self.pages = pages

    def collect(self):
        yield from topology_metrics(self.pages)


def test_metrics_serve_prometheus_histograms_in_seconds():
    registry = CollectorRegistry(auto_describe=False)
    registry.register(Pages([topology_page(FACTS, include_sys=False, now=NOW)]))
    text = generate_latest(registry).decode()
    families = {f.name: f for f in text_string_to_metric_families(text)}
    for key in ("complete", "execute", "process"):
        assert families[f"squall_component_{key}_latency_seconds"].type == "histogram"
    samples = families["squall_component_complete_latency_seconds"].samples
    buckets = [s for s in samples if s.name.endswith("_bucket")]
    assert [s.labels["le"] for s in buckets][:2] == ["1e-05", "2.5e-05"]
    assert buckets[-1].labels["le"] == "+Inf"
    values = [s.value for s in buckets]
    assert values == sorted(values) and values[-1] == 4
    count = next(s for s in samples if s.name.endswith("_count"))
    total = next(s for s in samples if s.name.endswith("_sum"))
    assert count.value == 4 and total.value == pytest.approx(100.03)
    assert count.labels == {
        "topology_id": "tiny-1",
        "topology": "tiny",
        "component": "numbers",
        "type": "spout",
    }
    le_10ms = next(s for s in buckets if s.labels["le"] == "0.01")
    assert le_10ms.value == 3
    assert not families["squall_spout_complete_latency_seconds"].samples  # no complete_ms
