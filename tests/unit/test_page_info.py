"""The pure builders behind Storm 2's UI/CLI read calls (nimbus.component_stats, page_info,
history): figures from beats, freshness, system components, hostile counters, errors."""

import pytest

from squall import thrift_api as T
from squall.nimbus.core.coordinator_log import CoordinatorMessage, submitted_confs
from squall.nimbus.reads.component_stats import executor_rows, stream_counts, totals
from squall.nimbus.reads.history import chosen_errors, owner_summaries, visible_history
from squall.nimbus.reads.page_info import (
    TopologyFacts,
    component_page,
    supervisor_ids,
    supervisor_page,
    topology_page,
)
from squall.records import Assignment, StormBase, SupervisorInfo, WorkerBeat

NOW = 10_000
A, B = ("sup-a", 6700), ("sup-b", 6700)
TASKS = {1: "__acker", 2: "numbers", 3: "numbers", 4: "sink", 5: "sink"}
BASE = StormBase("tiny", "active", NOW - 100, 2, {"numbers": 2, "sink": 2}, owner="alice")
ASSIGNMENT = Assignment(
    epoch=1,
    code_dir="t-1",
    node_host={"sup-a": "host-a", "sup-b": "host-b"},
    task_slots={1: A, 2: A, 3: B, 4: A, 5: B},
    task_start_secs={t: NOW - 50 for t in TASKS},
)


def stats(emitted=0, executed=0, acked=0, failed=0, stream="default"):
    return {
        "emitted": {stream: emitted},
        "transferred": {stream: emitted},
        "executed": executed,
        "acked": acked,
        "failed": failed,
    }


BEATS = {
    A: WorkerBeat(
        seq=3,
        time_secs=NOW - 1,
        uptime_secs=40,
        tasks={
            1: stats(emitted=7, stream="__ack_ack"),
            2: stats(emitted=10, acked=9, failed=1),
            4: stats(executed=12),
        },
    ),
    B: WorkerBeat(
        seq=4,
        time_secs=NOW - 1,
        uptime_secs=40,
        tasks={3: stats(emitted=5, acked=5), 5: stats(executed=3)},
    ),
}
ERRORS = {
    "sink": [
        {"error": "old", "time_secs": NOW - 30, "host": "host-a", "port": 6700},
        {"error": "new", "time_secs": NOW - 10, "host": "host-b", "port": 6700},
    ]
}
FACTS = TopologyFacts(
    id="tiny-1",
    base=BASE,
    tasks=TASKS,
    assignment=ASSIGNMENT,
    beats=BEATS,
    errors=ERRORS,
    kinds={"numbers": "spout", "sink": "bolt"},
    conf={"topology.workers": 2},
)


# a topology whose components declare memory and CPU, and the sink a generic resource
DECLARED = StormBase(
    "tiny",
    "active",
    NOW - 100,
    2,
    {"numbers": 2, "sink": 2},
    component_resources={"numbers": (128.0, 10.0), "sink": (256.0, 50.0)},
    component_generic={"sink": {"gpu.count": 1.0}},
)


def test_topology_page_sums_each_components_executors():
    page = topology_page(FACTS, include_sys=False, now=NOW)
    assert (page.id, page.name, page.status, page.uptime_secs) == ("tiny-1", "tiny", "ACTIVE", 100)
    assert (page.num_tasks, page.num_executors, page.num_workers) == (5, 5, 2)
    spout = page.id_to_spout_agg_stats["numbers"]
    assert spout.type == T.ComponentType.SPOUT
    assert (spout.common_stats.emitted, spout.common_stats.acked) == (15, 14)
    assert spout.common_stats.failed == 1 and spout.common_stats.num_executors == 2
    sink = page.id_to_bolt_agg_stats["sink"]
    assert sink.specific_stats.bolt.executed == 15
    assert sink.last_error.error == "new"
    assert set(page.id_to_bolt_agg_stats) == {"sink"}  # the acker is a system component
    stats_ = page.topology_stats
    assert stats_.window_to_emitted[":all-time"] == 15  # __ack_ack is a system stream
    assert (stats_.window_to_acked[":all-time"], stats_.window_to_failed[":all-time"]) == (14, 1)
    assert stats_.window_to_emitted["600"] == 0  # these beats carry no windows
    assert page.owner == "alice" and '"topology.workers": 2' in page.topology_conf
    workers = {(w.supervisor_id, w.port): w for w in page.workers}
    assert workers[A].component_to_num_tasks == {"numbers": 1, "sink": 1}
    assert workers[A].num_executors == 3 and workers[A].host == "host-a"


def test_system_components_and_streams_show_when_asked():
    page = topology_page(FACTS, include_sys=True, now=NOW)
    assert page.id_to_bolt_agg_stats["__acker"].common_stats.emitted == 7
    assert page.topology_stats.window_to_emitted[":all-time"] == 22
    workers = {(w.supervisor_id, w.port): w for w in page.workers}
    assert workers[A].component_to_num_tasks == {"__acker": 1, "numbers": 1, "sink": 1}


def test_a_beat_from_before_the_assignment_counts_nothing():
    stale = {**BEATS, B: WorkerBeat(seq=1, time_secs=NOW, uptime_secs=500, tasks=BEATS[B].tasks)}
    rows = executor_rows(ASSIGNMENT, TASKS, stale, NOW)
    assert [r.stats is None for r in rows] == [False, False, True, False, True]
    assert totals(rows, include_sys=False).executed == 12


def test_hostile_counters_count_as_nothing_and_sums_stay_in_i64():
    # the same rule as getTopologyInfo's stats: junk entries are left out, not shown as 0
    assert stream_counts({"s": "9", "t": True, "u": -3, 7: 1, "v": 2**70, "w": 4}) == {"w": 4}
    assert stream_counts("not a map") == {}
    beats = {A: WorkerBeat(1, NOW, 1, {2: {"executed": 2**63 - 1}, 4: {"executed": 5}})}
    rows = executor_rows(ASSIGNMENT, {2: "x", 4: "x"}, beats, NOW)
    assert totals(rows, include_sys=True).executed == 2**63 - 1


def test_component_page_lists_its_executors_streams_and_errors():
    page = component_page(FACTS, "sink", include_sys=False, now=NOW)
    assert page.component_type == T.ComponentType.BOLT
    assert (page.num_executors, page.num_tasks, page.topology_status) == (2, 2, "ACTIVE")
    rows = {e.exec_summary.executor_info.task_start: e for e in page.exec_stats}
    assert set(rows) == {4, 5}
    assert rows[5].exec_summary.host == "host-b" and rows[5].exec_summary.uptime_secs == 50
    assert rows[4].stats.specific_stats.bolt.executed == 12
    assert page.window_to_stats[":all-time"].specific_stats.bolt.executed == 15
    assert [e.error for e in page.errors] == ["old", "new"]
    spout = component_page(FACTS, "numbers", include_sys=False, now=NOW)
    assert spout.sid_to_output_stats["default"].common_stats.emitted == 15
    with pytest.raises(T.NotAliveException, match="nope"):
        component_page(FACTS, "nope", include_sys=False, now=NOW)


def test_an_unassigned_topology_has_pages_without_figures():
    facts = TopologyFacts("t-2", BASE, TASKS, None)
    page = topology_page(facts, include_sys=False, now=NOW)
    assert page.num_workers == 0 and page.workers == []
    assert page.id_to_bolt_agg_stats["sink"].common_stats.emitted == 0


def test_supervisor_page_hides_components_of_topologies_the_caller_may_not_read():
    supervisors = {
        "sup-a": SupervisorInfo("host-a", [6700], 0),
        "sup-b": SupervisorInfo("host-b", [6700], 0),
    }
    assert supervisor_ids(supervisors, "sup-b", None) == ["sup-b"]
    assert supervisor_ids(supervisors, None, "host-a") == ["sup-a"]
    for sid, host in (("nope", None), (None, "nowhere")):
        with pytest.raises(T.NotAliveException):
            supervisor_ids(supervisors, sid, host)
    summary = T.SupervisorSummary(
        host="host-a", uptime_secs=1, num_workers=1, num_used_workers=1, supervisor_id="sup-a"
    )
    page = supervisor_page([summary], [FACTS], include_sys=False, allowed=lambda f: False)
    assert [(w.supervisor_id, w.topology_id) for w in page.worker_summaries] == [
        ("sup-a", "tiny-1")
    ]
    assert page.worker_summaries[0].component_to_num_tasks is None
    page = supervisor_page([summary], [FACTS], include_sys=False, allowed=lambda f: True)
    assert page.worker_summaries[0].component_to_num_tasks == {"numbers": 1, "sink": 1}


def message(seq, type_, values):
    return CoordinatorMessage(seq, "1", type_, "k", "h", "u", "s", 0.0, values)


def test_history_has_every_topology_ever_submitted_that_the_reader_may_read():
    log = [
        message(1, "submit", {"topology": "a-1", "conf": {"owner": "alice"}, "epoch": 1}),
        message(2, "kill", {"topology": "a-1", "removed": True, "epoch": 1}),
        message(3, "submit", {"topology": "b-1", "conf": {"owner": "bob"}, "epoch": 2}),
        message(4, "submit", {"topology": "late-1", "conf": {}, "epoch": 1}),  # deposed leader
        message(5, "submit", {"topology": ["bad"], "conf": {}, "epoch": 2}),
    ]
    submitted = submitted_confs(log)
    assert set(submitted) == {"a-1", "b-1"}
    live = {"c-1": {"owner": "alice"}, "b-1": {"owner": "alice"}}  # b-1's readers changed
    alices = visible_history(submitted, live, lambda conf: conf.get("owner") == "alice")
    assert alices == ["a-1", "b-1", "c-1"]
    assert visible_history(submitted, live, lambda conf: False) == []


def test_error_choice_all_none_or_the_newest():
    def info(text, t):
        return T.ErrorInfo(error=text, error_time_secs=t)

    errors = {"sink": [info("b", 5), info("c", 9), info("a", 1)], "numbers": []}
    assert chosen_errors(errors, None) == errors
    assert chosen_errors(errors, T.NumErrorsChoice.ALL) == errors
    assert chosen_errors(errors, T.NumErrorsChoice.NONE) == {"sink": [], "numbers": []}
    newest = chosen_errors(errors, T.NumErrorsChoice.ONE)
    assert [e.error for e in newest["sink"]] == ["c"] and newest["numbers"] == []


def test_owner_summaries_count_topologies_executors_and_workers():
    bases = {"t-1": BASE, "t-2": BASE, "u-1": StormBase("u", "active", 0, 1, {}, owner="bob")}
    tasks = {"t-1": TASKS, "t-2": {1: "x"}, "u-1": {}}
    every = owner_summaries(bases, tasks, {"t-1": ASSIGNMENT}, None)
    assert [(s.owner, s.total_topologies, s.total_executors, s.total_workers) for s in every] == [
        ("alice", 2, 6, 2),
        ("bob", 1, 0, 0),
    ]
    [carol] = owner_summaries(bases, tasks, {}, "carol")
    assert (carol.owner, carol.total_topologies, carol.total_executors) == ("carol", 0, 0)


def test_requested_and_assigned_resources_are_what_the_tasks_declared():
    """Storm's requested (every task) and assigned (the placed tasks) memory, CPU and generic
    resources, on the topology page, in the cluster summary and in the UI's JSON; a topology
    that declares none shows 0 (the supervisors' used figures count the same way)."""
    from squall.nimbus.reads.summaries import cluster_summary, topology_info
    from squall.ui import topology_json
    from squall.ui.cluster_json import topology_summary_json

    declared = DECLARED
    half = Assignment(1, "t-1", {"sup-a": "host-a"}, {2: A, 4: A}, {2: NOW, 4: NOW})
    page = topology_page(TopologyFacts("t-1", declared, TASKS, half), include_sys=False, now=NOW)
    assert (page.requested_memonheap, page.requested_cpu) == (768.0, 120.0)
    assert page.requested_generic_resources == {"gpu.count": 2.0}
    assert (page.assigned_memonheap, page.assigned_cpu) == (384.0, 60.0)
    assert page.assigned_generic_resources == {"gpu.count": 1.0}
    assert page.requested_memoffheap == page.assigned_memoffheap == 0.0
    [summary] = cluster_summary(
        {"t-1": declared}, {"t-1": half}, {"t-1": TASKS}, {}, [], NOW
    ).topologies
    assert (summary.requested_memonheap, summary.assigned_cpu) == (768.0, 60.0)
    assert summary.assigned_generic_resources == {"gpu.count": 1.0}
    row = topology_summary_json(summary)
    assert (row["requestedTotalMem"], row["assignedCpu"]) == (768.0, 60.0)
    assert row["requestedGenericResources"] == "gpu.count=2.0"
    shown = topology_json.topology_page(page, ":all-time", NOW)
    assert (shown["assignedMemOnHeap"], shown["requestedCpu"]) == (384.0, 120.0)
    assert shown["assignedGenericResources"] == "gpu.count=1.0"
    plain = topology_page(FACTS, include_sys=False, now=NOW)  # declares nothing
    assert (plain.requested_memonheap, plain.assigned_cpu) == (0.0, 0.0)
    assert plain.requested_generic_resources == {}
    info = topology_info("t-1", declared, half, TASKS, {}, {}, NOW)  # Storm's fields 521-526
    assert (info.requested_memonheap, info.requested_cpu) == (768.0, 120.0)
    assert (info.assigned_memonheap, info.assigned_cpu, info.assigned_memoffheap) == (
        384.0,
        60.0,
        0.0,
    )


def test_each_component_shows_what_one_of_its_tasks_declared():
    """Storm's resources_map per component (NormalizedResourceRequest.toNormalizedMap: memory
    and CPU under Storm's names, then generic resources), in the topology page's rows and
    on the component's page, and the UI's requestedMemOnHeap, requestedCpu and generic
    resources from it; a component that declares nothing shows 0."""
    from squall.ui import component_json, topology_json

    declared = DECLARED
    facts = TopologyFacts(
        "t-1", declared, TASKS, ASSIGNMENT, BEATS, kinds={"numbers": "spout", "sink": "bolt"}
    )
    page = topology_page(facts, include_sys=False, now=NOW)
    numbers = page.id_to_spout_agg_stats["numbers"].common_stats.resources_map
    assert numbers == {
        "onheap.memory.mb": 128.0,
        "offheap.memory.mb": 0.0,
        "cpu.pcore.percent": 10.0,
    }
    sink = component_page(facts, "sink", include_sys=False, now=NOW).resources_map
    assert sink == {
        "onheap.memory.mb": 256.0,
        "offheap.memory.mb": 0.0,
        "cpu.pcore.percent": 50.0,
        "gpu.count": 1.0,
    }
    shown = topology_json.topology_page(page, ":all-time", NOW)
    [spout], [bolt] = shown["spouts"], shown["bolts"]
    assert (spout["requestedMemOnHeap"], spout["requestedCpu"]) == (128.0, 10.0)
    assert (spout["requestedGenericResourcesComp"], bolt["requestedGenericResourcesComp"]) == (
        "",
        "gpu.count=1.0",
    )
    sink_page = component_page(facts, "sink", include_sys=False, now=NOW)
    shown_sink = component_json.component_page(sink_page, ":all-time", NOW)
    assert (shown_sink["requestedMemOnHeap"], shown_sink["requestedMemOffHeap"]) == (256.0, 0.0)
    assert (shown_sink["requestedCpu"], shown_sink["requestedGenericResources"]) == (
        50.0,
        "gpu.count=1.0",
    )
    plain = component_page(FACTS, "sink", include_sys=False, now=NOW).resources_map
    assert plain == {"onheap.memory.mb": 0.0, "offheap.memory.mb": 0.0, "cpu.pcore.percent": 0.0}
