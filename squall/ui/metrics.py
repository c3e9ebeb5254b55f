"""Prometheus /metrics of `squall ui`: a custom collector that reads nimbus once per scrape
(cluster summary, then each topology's page), so the figures are nimbus's and nothing is
kept between scrapes. Names follow Prometheus conventions: squall_ prefix, counters end in
_total, latency in seconds.

nimbus reports all-time counters per component and, where workers measure them, the
average complete latency of spout tuples and bolts' execute latency and capacity (gauges,
kept for dashboards made before the histograms), and latency histograms: every task counts
its latencies cumulatively into fixed buckets (squall/latency_histogram.py) and nimbus sums
a component's tasks bucket-wise, so `histogram_quantile` over `rate(..._bucket[5m])` gives
a component's recent quantiles. A latency nimbus did not measure is left out, not reported
as 0.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

from prometheus_client import CollectorRegistry, generate_latest
from prometheus_client.core import (
    CounterMetricFamily,
    GaugeMetricFamily,
    HistogramMetricFamily,
    Metric,
)
from prometheus_client.utils import floatToGoString

from squall.latency_histogram import cumulative

TOPOLOGY_LABELS = ["topology_id", "topology"]
COMPONENT_LABELS = [*TOPOLOGY_LABELS, "component", "type"]


def cluster_metrics(cluster: Any) -> list[Metric]:
    supervisors = GaugeMetricFamily("squall_supervisors", "Supervisors alive")
    supervisors.add_metric([], len(cluster.supervisors))
    slots = GaugeMetricFamily("squall_slots", "Worker slots of alive supervisors")
    slots.add_metric([], sum(s.num_workers for s in cluster.supervisors))
    used = GaugeMetricFamily("squall_slots_used", "Worker slots running a worker")
    used.add_metric([], sum(s.num_used_workers for s in cluster.supervisors))
    topologies = GaugeMetricFamily("squall_topologies", "Topologies alive")
    topologies.add_metric([], len(cluster.topologies))
    return [supervisors, slots, used, topologies]


def topology_metrics(pages: list[Any]) -> list[Metric]:
    """Per topology and per component figures from TopologyPageInfo answers."""
    info = GaugeMetricFamily(
        "squall_topology_info",
        "A topology alive (1), with its status",
        labels=[*TOPOLOGY_LABELS, "status"],
    )
    uptime = GaugeMetricFamily(
        "squall_topology_uptime_seconds", "Topology uptime", labels=TOPOLOGY_LABELS
    )
    workers = GaugeMetricFamily(
        "squall_topology_workers", "Workers of a topology", labels=TOPOLOGY_LABELS
    )
    executors = GaugeMetricFamily(
        "squall_component_executors", "Executors of a component", labels=COMPONENT_LABELS
    )
    counters = {
        key: CounterMetricFamily(f"squall_component_{key}", doc, labels=COMPONENT_LABELS)
        for key, doc in (
            ("emitted", "Tuples emitted (user streams)"),
            ("transferred", "Tuples transferred to other tasks (user streams)"),
            ("acked", "Tuples acked (spouts: tuple trees completed)"),
            ("failed", "Tuples failed (spouts: tuple trees failed or timed out)"),
        )
    }
    executed = CounterMetricFamily(
        "squall_bolt_executed", "Tuples a bolt executed", labels=COMPONENT_LABELS
    )
    complete = GaugeMetricFamily(
        "squall_spout_complete_latency_seconds",
        "Average time from a spout's emit to its tuple tree's ack, all time",
        labels=COMPONENT_LABELS,
    )
    execute = GaugeMetricFamily(
        "squall_bolt_execute_latency_seconds",
        "Average time a bolt spends executing one input, all time",
        labels=COMPONENT_LABELS,
    )
    capacity = GaugeMetricFamily(
        "squall_bolt_capacity",
        "Share of the last 10 minutes the busiest task of a bolt spent executing (Storm's)",
        labels=COMPONENT_LABELS,
    )
    histograms = {
        key: HistogramMetricFamily(
            f"squall_component_{key}_latency_seconds", doc, labels=COMPONENT_LABELS
        )
        for key, doc in (
            ("complete", "Time from a spout's emit to its tuple tree's ack"),
            ("execute", "Time a bolt spends executing one input"),
            ("process", "Time from a bolt's input starting to execute to its ack leaving"),
        )
    }
    errors = GaugeMetricFamily(
        "squall_component_last_error_timestamp_seconds",
        "When the component last reported an error",
        labels=COMPONENT_LABELS,
    )
    for page in pages:
        tl = [page.id, page.name or ""]
        info.add_metric([*tl, page.status or ""], 1)
        uptime.add_metric(tl, page.uptime_secs or 0)
        workers.add_metric(tl, page.num_workers or 0)
        for kind, stats in (
            ("spout", page.id_to_spout_agg_stats or {}),
            ("bolt", page.id_to_bolt_agg_stats or {}),
        ):
            for component, agg in sorted(stats.items()):
                labels = [*tl, component, kind]
                common = agg.common_stats
                executors.add_metric(labels, common.num_executors or 0)
                for key, family in counters.items():
                    family.add_metric(labels, getattr(common, key) or 0)
                specific = agg.specific_stats
                if kind == "bolt" and specific and specific.bolt:
                    bolt = specific.bolt
                    executed.add_metric(labels, bolt.executed or 0)
                    if bolt.execute_latency_ms is not None:
                        execute.add_metric(labels, bolt.execute_latency_ms / 1000.0)
                    if bolt.capacity is not None:  # Storm's: over the last 10 minutes
                        capacity.add_metric(labels, bolt.capacity)
                    add_histogram(histograms["execute"], labels, bolt.execute_latency_histogram)
                    add_histogram(histograms["process"], labels, bolt.process_latency_histogram)
                spout = specific.spout if specific else None
                if spout is not None and spout.complete_latency_ms is not None:
                    complete.add_metric(labels, spout.complete_latency_ms / 1000.0)
                if spout is not None:
                    add_histogram(histograms["complete"], labels, spout.complete_latency_histogram)
                if agg.last_error is not None:
                    errors.add_metric(labels, agg.last_error.error_time_secs)
    return [
        info,
        uptime,
        workers,
        executors,
        *counters.values(),
        executed,
        execute,
        capacity,
        complete,
        *histograms.values(),
        errors,
    ]


def add_histogram(family: HistogramMetricFamily, labels: list[str], histogram: Any) -> None:
    """One component's LatencyHistogram (ms, per bucket) as cumulative buckets in seconds
    ending in +Inf; nothing when nimbus sent none (nothing measured yet)."""
    if histogram is None or not histogram.bucket_counts:
        return
    buckets = cumulative(histogram.upper_bounds_ms or [], histogram.bucket_counts)
    family.add_metric(
        labels,
        [(floatToGoString(bound / 1000.0), n) for bound, n in buckets],
        (histogram.sum_ms or 0.0) / 1000.0,
    )


class NimbusCollector:
    """prometheus_client's custom collector protocol: collect() is called per scrape."""

    def __init__(self, link: Any) -> None:
        self.link = link

    def collect(self) -> Iterator[Metric]:
        def read(client: Any) -> tuple[Any, list[Any]]:
            cluster = client.getClusterInfo()
            pages = []
            for summary in cluster.topologies:
                try:
                    pages.append(client.getTopologyPageInfo(summary.id, ":all-time", False))
                except Exception:  # noqa: BLE001 - killed since, or not ours to read: skip it
                    continue
            return cluster, pages

        cluster, pages = self.link.call(read)
        yield from cluster_metrics(cluster)
        yield from topology_metrics(pages)


def render_metrics(link: Any) -> bytes:
    """One scrape in Prometheus's text format (NimbusUnavailable when nimbus is down)."""
    registry = CollectorRegistry(auto_describe=False)
    registry.register(NimbusCollector(link))
    return generate_latest(registry)
