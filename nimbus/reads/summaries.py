"""The Thrift summaries nimbus answers reads with (getClusterInfo, getTopologyInfo), built
from the controller's model as pure functions: time is passed in."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

from squall import thrift_api as T
from squall.nimbus.reads.component_stats import error_infos, executor_rows
from squall.nimbus.reads.task_figures import (
    WINDOWS,
    average,
    busy_ms,
    complete_ms,
    count,
    stream_counts,
    window_of,
)
from squall.nimbus.reads.topology_resources import Declared, declared, topology_resources
from squall.nimbus.scheduling.generic_resources import CPU, NOT_GENERIC, TOTAL_MEMORY
from squall.nimbus.scheduling.resource_conf import fragmentation_bar
from squall.records import Assignment, Slot, StormBase, SupervisorInfo, WorkerBeat
from squall.storm_version import storm_compatible
from squall.thrift_api import DEFAULT_STREAM

NOTHING: Declared = (0.0, 0.0, {})  # what a supervisor without tasks holds


def cluster_summary(
    bases: Mapping[str, StormBase],
    assignments: Mapping[str, Assignment],
    tasks: Mapping[str, Mapping[int, str]],
    supervisors: Mapping[str, SupervisorInfo],
    nimbuses: list[Any],
    now: float,
    sched_statuses: Mapping[str, str] | None = None,
    blacklisted: Mapping[str, str] | None = None,
    bar: tuple[float, float] = fragmentation_bar({}),
) -> Any:
    """`sched_statuses`: the leader's scheduler statuses by topology id (a standby has none);
    `blacklisted`: supervisor id -> why the leader's blacklist left it out of scheduling;
    `bar`: what a supervisor must have left not to count as fragmented (fragmentation_bar)."""
    blacklisted = blacklisted or {}
    now_secs = int(now)
    used: dict[str, set[Slot]] = {}
    for a in assignments.values():
        for slot in a.task_slots.values():
            used.setdefault(slot[0], set()).add(slot)
    placed = _placed(bases, assignments, tasks)
    return T.ClusterSummary(
        supervisors=[
            T.SupervisorSummary(
                host=info.host,
                uptime_secs=max(0, now_secs - info.start_time_secs),
                num_workers=len(info.ports),
                num_used_workers=len(used.get(sid, ())),
                supervisor_id=sid,
                version=storm_compatible(info.version),
                squall_version=info.version,
                # what a supervisor offers under Storm's normalized names, as Storm's
                # nimbus reports it (its UI counts any other name as a generic resource),
                # and what its tasks declared; a generic map entry under one of those names
                # (an older supervisor's registration) is not a generic resource
                total_resources={
                    **{k: v for k, v in info.generic_resources.items() if k not in NOT_GENERIC},
                    TOTAL_MEMORY: info.memory_capacity_mb,
                    CPU: info.cpu_capacity,
                },
                used_mem=placed.get(sid, NOTHING)[0],
                used_cpu=placed.get(sid, NOTHING)[1],
                **_fragmented(info, placed.get(sid, NOTHING), bar),
                used_generic_resources=dict(placed.get(sid, NOTHING)[2]),
                blacklisted=sid in blacklisted,
                blacklist_reason=blacklisted.get(sid),
                spark_connect=info.spark_connect,
            )
            for sid, info in sorted(supervisors.items())
        ],
        topologies=[
            T.TopologySummary(
                id=tid,
                name=base.name,
                num_tasks=len(tasks.get(tid, {})),
                num_executors=len(tasks.get(tid, {})),
                num_workers=len(assignments[tid].slots()) if tid in assignments else 0,
                uptime_secs=max(0, now_secs - base.launch_time_secs),
                status=base.status.upper(),
                sched_status=(sched_statuses or {}).get(tid) or None,
                owner=base.owner or None,
                **topology_resources(base, assignments.get(tid), tasks.get(tid, {})),
            )
            for tid, base in sorted(bases.items())
        ],
        nimbuses=nimbuses,
    )


def _fragmented(info: SupervisorInfo, used: Declared, bar: tuple[float, float]) -> dict:
    """Storm's fragmented_mem and fragmented_cpu: what is left on a supervisor that cannot
    take one more task and acker (Nimbus.isFragmented), else 0."""
    left_mem, left_cpu = info.memory_capacity_mb - used[0], info.cpu_capacity - used[1]
    if bar[0] > left_mem or bar[1] > left_cpu:
        return {"fragmented_mem": left_mem, "fragmented_cpu": left_cpu}
    return {"fragmented_mem": 0.0, "fragmented_cpu": 0.0}


def _placed(
    bases: Mapping[str, StormBase],
    assignments: Mapping[str, Assignment],
    tasks: Mapping[str, Mapping[int, str]],
) -> dict[str, Declared]:
    """Per supervisor: what its assigned tasks declared (memory, CPU and generic resources:
    StormBase's component_resources and component_generic, what the scheduler placed by);
    tasks of topologies that declare none count as nothing."""
    on: dict[str, list[tuple[StormBase, str]]] = {}
    for tid, a in assignments.items():
        base, names = bases.get(tid), tasks.get(tid, {})
        if base is not None:
            for task, slot in a.task_slots.items():
                on.setdefault(slot[0], []).append((base, names.get(task, "")))
    return {sid: declared(held) for sid, held in on.items()}


def topology_info(
    tid: str,
    base: StormBase,
    assignment: Assignment | None,
    tasks: Mapping[int, str],
    beats: Mapping[Slot, WorkerBeat],
    errors: Mapping[str, list[dict[str, Any]]],
    now: float,
    spouts: frozenset[str] = frozenset(),
    sched_status: str = "",
    sole_inputs: Mapping[str, tuple[str, str]] | None = None,
) -> Any:
    """`spouts` names the spout components; every other component (the acker included) is a
    bolt, which decides whether an executor's stats carry SpoutStats or BoltStats.
    `sole_inputs`: the (component, stream) of each bolt with exactly one input stream."""
    now_secs = int(now)
    sole = sole_inputs or {}
    executors = [
        T.ExecutorSummary(
            executor_info=T.ExecutorInfo(task_start=row.task, task_end=row.task),
            component_id=row.component,
            host=row.host,
            port=row.slot[1] if row.slot else 0,
            uptime_secs=row.uptime_secs,
            stats=(
                _executor_stats(row.stats, row.component in spouts, sole.get(row.component))
                if row.stats
                else None
            ),
        )
        for row in executor_rows(assignment, tasks, beats, now)
    ]
    return T.TopologyInfo(
        id=tid,
        name=base.name,
        uptime_secs=max(0, now_secs - base.launch_time_secs),
        executors=executors,
        status=base.status.upper(),
        errors={component: error_infos(entries) for component, entries in errors.items()},
        component_debug={key: debug_options(pct) for key, pct in base.component_debug.items()},
        sched_status=sched_status or None,
        owner=base.owner or None,
        **{
            k: v
            for k, v in topology_resources(base, assignment, tasks).items()
            if not k.endswith("_generic_resources")  # TopologyInfo has no generic ones
        },
    )


def debug_options(percentage: float | None) -> Any:
    """Storm's DebugOptions for a stored sampling percentage (None: debug is off)."""
    if percentage is None:
        return None
    return T.DebugOptions(enable=True, samplingpct=percentage)


def _executor_stats(
    stats: Mapping[str, Any], spout: bool, sole_input: tuple[str, str] | None = None
) -> Any:
    """Storm's ExecutorStats for every window, whose `specific` is required: a Storm Java
    client refuses the whole TopologyInfo without it. squall counts acks, fails, executes and
    latencies per task, not per stream: a spout's are reported under the default stream (as
    its complete latency, measured over all its streams), a bolt's under its input stream
    when it has only one; a bolt with several leaves those maps empty rather than invent a
    split."""
    figures = {w: window_of(stats, w) for w in WINDOWS}
    if spout:

        def by_stream(value: Callable[[Mapping[str, Any]], Any]) -> dict[str, dict[Any, Any]]:
            out = {w: value(f) for w, f in figures.items()}
            return {w: {} if v is None else {DEFAULT_STREAM: v} for w, v in out.items()}

        specific = T.ExecutorSpecificStats(
            spout=T.SpoutStats(
                acked=by_stream(lambda f: count(f.get("acked"))),
                failed=by_stream(lambda f: count(f.get("failed"))),
                complete_ms_avg=by_stream(
                    lambda f: (complete_ms(f.get("complete_ms")) or {}).get("avg")
                ),
            )
        )
    else:
        key = T.GlobalStreamId(*sole_input) if sole_input else None

        def by_input(value: Callable[[Mapping[str, Any]], Any]) -> dict[str, dict[Any, Any]]:
            out = {w: value(f) if key else None for w, f in figures.items()}
            return {w: {} if v is None else {key: v} for w, v in out.items()}

        def latency(name: str) -> Callable[[Mapping[str, Any]], Any]:
            return lambda f: average(busy_ms(f, name), count(f.get("executed"))) or None

        specific = T.ExecutorSpecificStats(
            bolt=T.BoltStats(
                acked=by_input(lambda f: count(f.get("acked"))),
                failed=by_input(lambda f: count(f.get("failed"))),
                process_ms_avg=by_input(latency("process_ms")),
                executed=by_input(lambda f: count(f.get("executed"))),
                execute_ms_avg=by_input(latency("execute_ms")),
            )
        )
    return T.ExecutorStats(
        emitted={w: stream_counts(f.get("emitted")) for w, f in figures.items()},
        transferred={w: stream_counts(f.get("transferred")) for w, f in figures.items()},
        specific=specific,
        rate=0.0,
    )
