"""The pages of Storm's UI (getTopologyPageInfo, getComponentPageInfo, getSupervisorPageInfo)
as pure functions of what nimbus knows about a topology (TopologyFacts) and the time.

Figures are per Storm window (see component_stats): a page's components and executors for
the window asked for (unknown windows read as all-time, as Storm's do), its topology and
component totals for every window. What squall does not measure or have (resources,
scheduler status, blob replication, event logger) keeps Storm's defaults or stays unset,
as the fields are optional.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any

from squall import thrift_api as T
from squall.nimbus.reads.component_stats import (
    ALL_TIME,
    BOLT,
    SPOUT,
    WINDOWS,
    ExecutorRow,
    aggregate_stats,
    component_type,
    error_infos,
    executor_rows,
    is_system_id,
    last_error,
    per_stream,
    totals,
)
from squall.nimbus.reads.summaries import debug_options
from squall.nimbus.reads.topology_resources import component_resources_map, topology_resources
from squall.records import Assignment, Slot, StormBase, WorkerBeat


@dataclass(frozen=True)
class TopologyFacts:
    """One topology as the pages need it, read once per call."""

    id: str
    base: StormBase
    tasks: Mapping[int, str]
    assignment: Assignment | None
    beats: Mapping[Slot, WorkerBeat] = field(default_factory=dict)
    errors: Mapping[str, list[dict[str, Any]]] = field(default_factory=dict)
    kinds: Mapping[str, str] = field(default_factory=dict)  # component -> SPOUT or BOLT
    conf: Mapping[str, Any] = field(default_factory=dict)
    # component -> the (component, stream) inputs it subscribes to, from its structure
    inputs: Mapping[str, tuple[tuple[str, str], ...]] = field(default_factory=dict)

    def kind(self, component: str) -> str:
        """Storm counts its system components (the acker) as bolts."""
        return self.kinds.get(component, BOLT)

    def uptime(self, now: float) -> int:
        return max(0, int(now) - self.base.launch_time_secs)


def _by_component(rows: Iterable[ExecutorRow]) -> dict[str, list[ExecutorRow]]:
    out: dict[str, list[ExecutorRow]] = {}
    for row in rows:
        out.setdefault(row.component, []).append(row)
    return out


def worker_summaries(
    facts: TopologyFacts,
    include_sys: bool,
    allowed: bool = True,
    supervisor: str | None = None,
) -> list[Any]:
    """One WorkerSummary per slot of the topology (only `supervisor`'s when given). Who may
    not read the topology sees where it runs but not its components (as in Storm)."""
    a = facts.assignment
    if a is None:
        return []
    out = []
    for slot in sorted(a.slots()):
        if supervisor is not None and slot[0] != supervisor:
            continue
        components: dict[str, int] = {}
        on_slot = a.tasks_on(slot)
        for task in on_slot:
            name = facts.tasks.get(task, "")
            if include_sys or not is_system_id(name):
                components[name] = components.get(name, 0) + 1
        beat = facts.beats.get(slot)
        out.append(
            T.WorkerSummary(
                supervisor_id=slot[0],
                host=a.node_host.get(slot[0], ""),
                port=slot[1],
                topology_id=facts.id,
                topology_name=facts.base.name,
                num_executors=len(on_slot),
                component_to_num_tasks=components if allowed else None,
                time_secs=beat.time_secs if beat else 0,
                uptime_secs=beat.uptime_secs if beat else 0,
                owner=facts.base.owner,
            )
        )
    return out


def served_window(window: str | None) -> str:
    """The window a page is for: Storm's keys, anything else is all-time (as in Storm)."""
    return window if window in WINDOWS else ALL_TIME


def topology_page(
    facts: TopologyFacts, include_sys: bool, now: float, window: str | None = ALL_TIME
) -> Any:
    window = served_window(window)
    rows = executor_rows(facts.assignment, facts.tasks, facts.beats, now)
    spouts: dict[str, Any] = {}
    bolts: dict[str, Any] = {}
    for component, mine in sorted(_by_component(rows).items()):
        if is_system_id(component) and not include_sys:
            continue
        kind = facts.kind(component)
        stats = aggregate_stats(
            kind,
            totals(mine, include_sys, window),
            error=last_error(facts.errors.get(component, [])),
        )
        stats.common_stats.resources_map = component_resources_map(facts.base, component)
        (spouts if kind == SPOUT else bolts)[component] = stats
    everything = {w: totals(rows, include_sys, w) for w in WINDOWS}
    spout_rows = [r for r in rows if facts.kind(r.component) == SPOUT]
    spout_totals = {w: totals(spout_rows, include_sys, w) for w in WINDOWS}
    return T.TopologyPageInfo(
        id=facts.id,
        name=facts.base.name,
        uptime_secs=facts.uptime(now),
        status=facts.base.status.upper(),
        num_tasks=len(facts.tasks),
        num_workers=len(facts.assignment.slots()) if facts.assignment else 0,
        num_executors=len(facts.tasks),
        topology_conf=json.dumps(dict(facts.conf)),
        id_to_spout_agg_stats=spouts,
        id_to_bolt_agg_stats=bolts,
        # Storm's topology totals: emitted and transferred over every executor, acks,
        # failures and latency over the spouts (a tuple tree completes at its spout)
        topology_stats=T.TopologyStats(
            window_to_emitted={w: t.emitted for w, t in everything.items()},
            window_to_transferred={w: t.transferred for w, t in everything.items()},
            window_to_complete_latencies_ms={
                w: t.complete_ms for w, t in spout_totals.items() if t.complete_ms is not None
            },
            window_to_acked={w: t.acked for w, t in spout_totals.items()},
            window_to_failed={w: t.failed for w, t in spout_totals.items()},
        ),
        owner=facts.base.owner,
        workers=worker_summaries(facts, include_sys),
        debug_options=debug_options(facts.base.component_debug.get(facts.id)),
        **topology_resources(facts.base, facts.assignment, facts.tasks),
    )


def component_page(
    facts: TopologyFacts,
    component: str,
    include_sys: bool,
    now: float,
    window: str | None = ALL_TIME,
) -> Any:
    """NotAliveException when the topology has no such component. Output streams and
    executors are for `window`; the component's totals for every window."""
    window = served_window(window)
    if component not in set(facts.tasks.values()):
        raise T.NotAliveException(
            msg=f"topology {facts.base.name!r} has no component {component!r}"
        )
    kind = facts.kind(component)
    rows = executor_rows(facts.assignment, facts.tasks, facts.beats, now)
    mine = [r for r in rows if r.component == component]
    errors = facts.errors.get(component, [])
    return T.ComponentPageInfo(
        component_id=component,
        component_type=component_type(kind),
        topology_id=facts.id,
        topology_name=facts.base.name,
        num_executors=len(mine),
        num_tasks=len(mine),
        window_to_stats={
            w: aggregate_stats(kind, totals(mine, include_sys, w), error=last_error(errors))
            for w in WINDOWS
        },
        gsid_to_input_stats=input_stats(kind, facts.inputs.get(component, ()), mine, window),
        sid_to_output_stats={
            stream: aggregate_stats(kind, t)
            for stream, t in per_stream(mine, include_sys, window).items()
        },
        exec_stats=[_executor_aggregate(kind, row, window) for row in mine],
        errors=error_infos(errors),
        topology_status=facts.base.status.upper(),
        debug_options=debug_options(facts.base.component_debug.get(component)),
        resources_map=component_resources_map(facts.base, component),
    )


def input_stats(
    kind: str, inputs: Iterable[tuple[str, str]], rows: Iterable[ExecutorRow], window: str
) -> dict[Any, Any]:
    """A bolt's figures per input stream (Storm's gsid_to_input_stats). squall's tasks count
    executions per task, not per input: a bolt with one input stream has all its figures
    under it; one with several lists each input with its figures unset (unmeasured), never
    a made-up split."""
    distinct = sorted(set(inputs))
    if kind != BOLT or not distinct:
        return {}
    if len(distinct) == 1:
        measured = aggregate_stats(kind, totals(rows, True, window))
        measured.common_stats.emitted = measured.common_stats.transferred = None
        return {T.GlobalStreamId(*distinct[0]): measured}
    unmeasured = T.ComponentAggregateStats(
        type=component_type(kind),
        common_stats=T.CommonAggregateStats(),
        specific_stats=T.SpecificAggregateStats(bolt=T.BoltAggregateStats()),
    )
    return {T.GlobalStreamId(*i): unmeasured for i in distinct}


def _executor_aggregate(kind: str, row: ExecutorRow, window: str) -> Any:
    return T.ExecutorAggregateStats(
        exec_summary=T.ExecutorSummary(
            executor_info=T.ExecutorInfo(task_start=row.task, task_end=row.task),
            component_id=row.component,
            host=row.host,
            port=row.slot[1] if row.slot else 0,
            uptime_secs=row.uptime_secs,
        ),
        stats=aggregate_stats(kind, totals([row], True, window)),
    )


def supervisor_ids(
    supervisors: Mapping[str, Any], supervisor_id: str | None, host: str | None
) -> list[str]:
    """The supervisors a supervisor page is about: the one named by id, else every one on
    `host`. NotAliveException when there is none (Storm fails or answers an empty page)."""
    if supervisor_id:
        if supervisor_id not in supervisors:
            raise T.NotAliveException(msg=f"supervisor {supervisor_id!r} is not alive")
        return [supervisor_id]
    found = sorted(sid for sid, info in supervisors.items() if info.host == host)
    if not found:
        raise T.NotAliveException(msg=f"no supervisor is alive on host {host!r}")
    return found


def supervisor_page(
    summaries: Iterable[Any],
    topologies: Iterable[TopologyFacts],
    include_sys: bool,
    allowed: Callable[[TopologyFacts], bool],
) -> Any:
    """The page for the supervisors in `summaries` (SupervisorSummary): their workers of
    every topology; component details only where `allowed`."""
    summaries, topologies = list(summaries), list(topologies)
    workers = [
        w
        for sid in (s.supervisor_id for s in summaries)
        for facts in topologies
        for w in worker_summaries(facts, include_sys, allowed(facts), supervisor=sid)
    ]
    return T.SupervisorPageInfo(supervisor_summaries=summaries, worker_summaries=workers)
