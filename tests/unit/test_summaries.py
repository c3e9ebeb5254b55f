"""Thrift summaries from the model: a beat counts for a task only when it comes from a
worker started after the task's assignment (durations compared, never clocks)."""

from types import SimpleNamespace

from squall.nimbus.reads.component_stats import (
    aggregate_stats,
    complete_latency,
    complete_ms,
    totals,
)
from squall.nimbus.reads.summaries import cluster_summary, topology_info
from squall.records import Assignment, StormBase, SupervisorInfo, WorkerBeat

BASE = StormBase("wc", "active", 1000, 1, {"a": 2})
TASKS = {1: "a", 2: "a"}


def assignment(start):
    return Assignment(
        1, "t", {"s1": "h1"}, {1: ("s1", 6700), 2: ("s1", 6700)}, {1: start, 2: start}
    )


def test_stats_only_from_a_worker_started_for_the_assignment():
    beat = WorkerBeat(seq=5, time_secs=0, uptime_secs=30, tasks={1: {"emitted": {"default": 3}}})
    # the task was reassigned 10 s ago, but this worker has been up 30 s: a stale beat
    stale = topology_info("t", BASE, assignment(1090), TASKS, {("s1", 6700): beat}, {}, 1100)
    assert stale.executors[0].stats is None
    fresh = topology_info("t", BASE, assignment(1050), TASKS, {("s1", 6700): beat}, {}, 1100)
    assert fresh.executors[0].stats.emitted[":all-time"] == {"default": 3}
    assert fresh.executors[0].stats.emitted["600"] == {}  # a beat without windows
    assert fresh.executors[1].stats is None  # no stats for task 2 in the beat
    assert (fresh.executors[0].host, fresh.executors[0].port) == ("h1", 6700)
    assert fresh.status == "ACTIVE" and fresh.uptime_secs == 100


def test_errors_and_cluster_summary():
    errors = {"a": [{"error": "boom", "time_secs": 5, "host": "h1", "port": 6700}]}
    info = topology_info("t", BASE, None, TASKS, {}, errors, 1100)
    assert info.errors["a"][0].error == "boom" and info.executors[0].port == 0
    summary = cluster_summary(
        {"t": BASE},
        {"t": assignment(1000)},
        {"t": TASKS},
        {"s1": SupervisorInfo("h1", [6700, 6701], 900)},
        [],
        1100,
    )
    [sup] = summary.supervisors
    assert (sup.num_workers, sup.num_used_workers, sup.uptime_secs) == (2, 1, 200)
    [topo] = summary.topologies
    assert (topo.num_tasks, topo.num_workers, topo.status) == (2, 1, "ACTIVE")


def test_a_beat_counts_within_the_rounding_slack_and_not_beyond():
    stats = {1: {"emitted": {"default": 1}}}
    within = WorkerBeat(seq=1, time_secs=0, uptime_secs=12, tasks=stats)  # assigned 10 s ago
    beyond = WorkerBeat(seq=1, time_secs=0, uptime_secs=13, tasks=stats)
    for beat, counted in ((within, True), (beyond, False)):
        info = topology_info("t", BASE, assignment(1090), TASKS, {("s1", 6700): beat}, {}, 1100)
        assert (info.executors[0].stats is not None) == counted


def test_stats_carry_storms_required_specific_part_spout_or_bolt():
    tasks = {1: "a", 2: "b"}
    a = Assignment(1, "t", {"s1": "h1"}, {1: ("s1", 6700), 2: ("s1", 6700)}, {1: 1050, 2: 1050})
    stats = {1: {"emitted": {"default": 3}}, 2: {"emitted": {}}}
    beat = WorkerBeat(seq=5, time_secs=0, uptime_secs=30, tasks=stats)
    info = topology_info("t", BASE, a, tasks, {("s1", 6700): beat}, {}, 1100, spouts={"a"})
    spout, bolt = (e.stats.specific for e in info.executors)
    assert spout.spout is not None and spout.bolt is None
    assert spout.spout.acked[":all-time"] == {"default": 0}
    assert bolt.bolt is not None and bolt.spout is None
    windows = {"600", "10800", "86400", ":all-time"}
    assert bolt.bolt.executed == {w: {} for w in windows}  # no sole input stream to key by


def test_summaries_report_a_storm_2_version_and_squalls_own():
    sup = SupervisorInfo("h1", [6700], 900, "0.1.0")
    [summary] = cluster_summary({}, {}, {}, {"s1": sup}, [], 1100).supervisors
    assert (summary.version, summary.squall_version) == ("2.8.8+squall.0.1.0", "0.1.0")


def test_a_spouts_complete_latency_is_served_and_junk_is_left_out():

    tasks = {1: "a", 2: "a"}
    a = Assignment(1, "t", {"s1": "h1"}, {1: ("s1", 6700), 2: ("s1", 6700)}, {1: 1050, 2: 1050})
    good = {"count": 3, "avg": 4.5, "p50": 4, "p99": 9.0}
    stats = {1: {"complete_ms": good}, 2: {"complete_ms": {**good, "avg": "x"}}}
    beat = WorkerBeat(seq=5, time_secs=0, uptime_secs=30, tasks=stats)
    info = topology_info("t", BASE, a, tasks, {("s1", 6700): beat}, {}, 1100, spouts={"a"})
    first, junk = (e.stats.specific.spout for e in info.executors)
    assert first.complete_ms_avg[":all-time"] == {"default": 4.5}
    assert junk.complete_ms_avg[":all-time"] == {}
    for bad in (
        None,
        [],
        {"count": 0, "avg": 1, "p50": 1, "p99": 1},
        {**good, "p99": -1},
        {**good, "p50": float("nan")},
        {**good, "count": True},
        {**good, "avg": True},
    ):
        assert complete_ms(bad) is None, bad
    assert complete_ms(good) == {"count": 3.0, "avg": 4.5, "p50": 4.0, "p99": 9.0}
    other = {"complete_ms": {"count": 1, "avg": 10.5, "p50": 1, "p99": 1}}
    assert complete_latency(good) == (3, 4.5 * 3) and complete_latency(other["complete_ms"]) == (
        1,
        10.5,
    )
    assert complete_latency({}) == (0, 0.0)
    rows = [SimpleNamespace(stats={"complete_ms": good})]  # an ExecutorRow's stats
    agg = aggregate_stats("spout", totals(rows, False))
    assert agg.specific_stats.spout.complete_latency_ms == 4.5


def test_a_supervisors_spark_connect_state_is_in_the_summary_the_ui_and_squall_list():
    from squall.commands.listing import listing_json, listing_lines
    from squall.ui.cluster_json import supervisor_json

    why = "did not listen in time (see /x/server.log)"
    supervisors = {
        "s1": SupervisorInfo("h1", [6700], 900, spark_connect="ready"),
        "s2": SupervisorInfo("h2", [6700], 900, spark_connect=f"failed: {why}"),
        "s3": SupervisorInfo("h3", [6700], 900),  # an older supervisor: it does not say
    }
    info = cluster_summary({}, {}, {}, supervisors, [], 1100)
    ready, failed, older = info.supervisors
    assert [s.spark_connect for s in info.supervisors] == ["ready", f"failed: {why}", "unknown"]
    assert supervisor_json(ready)["sparkConnect"] == "ready"
    assert supervisor_json(failed)["sparkConnect"] == f"failed: {why}"
    assert (
        supervisor_json(SimpleNamespace(**{**vars(older), "spark_connect": None}))["sparkConnect"]
        == "unknown"
    )  # from a nimbus too old to fill the field
    lines = listing_lines(info)
    assert lines[-6].split()[-1] == "Spark_connect"
    assert [line.split()[-1] for line in lines[-4:-1]] == ["ready", "failed", "unknown"]
    assert lines[-1] == f"s2 (h2): Spark Connect server failed: {why}"
    assert '"spark_connect": "ready"' in listing_json(info)


def test_generic_resources_offered_and_held_are_in_the_summary_and_the_ui():
    """A supervisor's generic resources are in its total_resources beside memory and CPU (as
    Storm's are) and what its tasks declared in used_generic_resources, per task; the UI
    prints them as Storm's UIHelpers does ("name=amount" sorted, memory and CPU left out),
    per supervisor and for the cluster."""
    from squall.ui.cluster_json import cluster_resources, supervisor_json

    base = StormBase(
        "gpus", "active", 1000, 1, {"a": 2, "b": 1}, component_generic={"a": {"gpu.count": 1.0}}
    )
    placed = Assignment(
        1,
        "t",
        {"s1": "h1", "s2": "h2"},
        {1: ("s1", 6700), 2: ("s2", 6700), 3: ("s1", 6700)},
        {1: 1000, 2: 1000, 3: 1000},
    )
    supervisors = {
        "s1": SupervisorInfo("h1", [6700], 900, generic_resources={"gpu.count": 2.0}),
        "s2": SupervisorInfo("h2", [6700], 900, generic_resources={"gpu.count": 1.0, "fpga": 1.0}),
        "s3": SupervisorInfo("h3", [6700], 900),  # offers none
    }
    info = cluster_summary(
        {"t": base}, {"t": placed}, {"t": {1: "a", 2: "a", 3: "b"}}, supervisors, [], 1100
    )
    s1, s2, s3 = info.supervisors
    assert s1.total_resources["gpu.count"] == 2.0
    # under Storm's normalized names, as Storm's nimbus reports a supervisor's offer
    assert (s1.total_resources["memory.mb"], s1.total_resources["cpu.pcore.percent"]) == (
        4096.0,
        400.0,
    )
    assert "supervisor.memory.capacity.mb" not in s1.total_resources
    assert (s1.used_generic_resources, s2.used_generic_resources) == (
        {"gpu.count": 1.0},
        {"gpu.count": 1.0},
    )
    assert s3.used_generic_resources == {}
    one = supervisor_json(s2)
    assert one["totalGenericResources"] == "fpga=1.0 gpu.count=1.0"
    assert one["usedGenericResources"] == "gpu.count=1.0"
    assert one["availGenericResources"] == "fpga=1.0 gpu.count=0.0"
    assert supervisor_json(s3)["totalGenericResources"] == ""
    cluster = cluster_resources(info.supervisors)
    assert cluster["totalGenerics"] == "fpga=1.0 gpu.count=3.0"
    assert cluster["availGenerics"] == "fpga=1.0 gpu.count=1.0"
    assert cluster["totalMem"] == 3 * 4096.0  # memory and CPU as before


def test_generic_amounts_print_as_java_prints_doubles_and_memory_names_are_not_generic():
    """Storm's UI prints a Java Double: 2.0E10 and 1.0E-4 beside 2.0; a registration's
    generic map entry under Storm's memory or CPU name (an older supervisor's: a supervisor
    now reads those as its capacities, supervisor/capacity.py) is not a generic resource and
    never replaces the capacity the scheduler places by."""
    from squall.ui.cluster_json import pretty_generic, supervisor_json

    assert pretty_generic({"b": 2e10, "a": 1e-4, "c": 2.0}) == "a=1.0E-4 b=2.0E10 c=2.0"
    odd = {"memory.mb": 8192.0, "cpu.pcore.percent": 50.0, "gpu.count": 1.0}
    supervisors = {"s1": SupervisorInfo("h1", [6700], 900, generic_resources=odd)}
    [sup] = cluster_summary({}, {}, {}, supervisors, [], 1100).supervisors
    assert (sup.total_resources["memory.mb"], sup.total_resources["cpu.pcore.percent"]) == (
        4096.0,
        400.0,
    )
    shown = supervisor_json(sup)
    assert (shown["totalMem"], shown["totalCpu"]) == (4096.0, 400.0)
    assert shown["totalGenericResources"] == "gpu.count=1.0"


def test_a_supervisor_too_small_for_one_more_task_and_acker_is_fragmented():
    """Storm's fragmented_mem and fragmented_cpu (Nimbus.isFragmented): what is left on a
    supervisor that cannot take one more task and acker at the cluster's defaults; the UI's
    cluster summary sums them. fragmentation_bar reads the cluster's defaults."""
    from squall.nimbus.scheduling.resource_conf import fragmentation_bar
    from squall.ui.cluster_json import cluster_resources

    base = StormBase("t", "active", 1000, 1, {"a": 2}, component_resources={"a": (1000.0, 90.0)})
    placed = Assignment(1, "t", {"s1": "h1"}, {1: ("s1", 6700), 2: ("s2", 6700)}, {1: 0, 2: 0})
    supervisors = {
        "s1": SupervisorInfo("h1", [6700], 900, memory_capacity_mb=1200.0, cpu_capacity=400.0),
        "s2": SupervisorInfo("h2", [6700], 900, memory_capacity_mb=4096.0, cpu_capacity=100.0),
        "s3": SupervisorInfo("h3", [6700], 900),  # nothing placed: room to spare
    }
    tasks = {"t": {1: "a", 2: "a"}}
    s1, s2, s3 = cluster_summary(
        {"t": base}, {"t": placed}, tasks, supervisors, [], 1100
    ).supervisors
    assert (s1.fragmented_mem, s1.fragmented_cpu) == (200.0, 310.0)  # 200 MB < 256 MB
    assert (s2.fragmented_mem, s2.fragmented_cpu) == (3096.0, 10.0)  # 10% CPU < 20%
    assert (s3.fragmented_mem, s3.fragmented_cpu) == (0.0, 0.0)
    shown = cluster_resources([s1, s2, s3])
    assert (shown["fragmentedMem"], shown["fragmentedCpu"]) == (3296.0, 320.0)
    assert fragmentation_bar({}) == (256.0, 20.0)
    own = {
        "topology.component.resources.onheap.memory.mb": 512,
        "topology.acker.cpu.pcore.percent": 5,
    }
    assert fragmentation_bar(own) == (640.0, 15.0)
