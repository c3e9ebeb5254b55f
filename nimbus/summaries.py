"""The Thrift summaries nimbus answers reads with (getClusterInfo, getTopologyInfo), built
from the controller's model as pure functions: time is passed in."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from squall import thrift_api as T
from squall.records import Assignment, Slot, StormBase, SupervisorInfo, WorkerBeat
from squall.storm_version import storm_compatible
from squall.thrift_api import DEFAULT_STREAM

from .component_stats import ALL_TIME, complete_ms, error_infos, executor_rows, stream_counts


def cluster_summary(
    bases: Mapping[str, StormBase],
    assignments: Mapping[str, Assignment],
    tasks: Mapping[str, Mapping[int, str]],
    supervisors: Mapping[str, SupervisorInfo],
    nimbuses: list[Any],
    now: float,
    sched_statuses: Mapping[str, str] | None = None,
) -> Any:
    """`sched_statuses`: the leader's scheduler statuses by topology id (a standby has none)."""
    now_secs = int(now)
    used: dict[str, set[Slot]] = {}
    for a in assignments.values():
        for slot in a.task_slots.values():
            used.setdefault(slot[0], set()).add(slot)
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
            )
            for tid, base in sorted(bases.items())
        ],
        nimbuses=nimbuses,
    )


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
) -> Any:
    """`spouts` names the spout components; every other component (the acker included) is a
    bolt, which decides whether an executor's stats carry SpoutStats or BoltStats."""
    now_secs = int(now)
    executors = [
        T.ExecutorSummary(
            executor_info=T.ExecutorInfo(task_start=row.task, task_end=row.task),
            component_id=row.component,
            host=row.host,
            port=row.slot[1] if row.slot else 0,
            uptime_secs=row.uptime_secs,
            stats=_executor_stats(row.stats, row.component in spouts) if row.stats else None,
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
    )


def debug_options(percentage: float | None) -> Any:
    """Storm's DebugOptions for a stored sampling percentage (None: debug is off)."""
    if percentage is None:
        return None
    return T.DebugOptions(enable=True, samplingpct=percentage)


def _executor_stats(stats: Mapping[str, Any], spout: bool) -> Any:
    """Storm's ExecutorStats, whose `specific` is required: a Storm Java client refuses the
    whole TopologyInfo without it. squall counts acks, fails and executes per task, not per
    stream, so Storm's per-stream maps stay empty rather than invent a split. A spout's
    complete latency is measured per task, over all its streams: it is reported under the
    default stream."""
    if spout:
        latency = complete_ms(stats.get("complete_ms"))
        avg = {ALL_TIME: {DEFAULT_STREAM: latency["avg"]}} if latency else _none()
        specific = T.ExecutorSpecificStats(
            spout=T.SpoutStats(acked=_none(), failed=_none(), complete_ms_avg=avg)
        )
    else:
        specific = T.ExecutorSpecificStats(
            bolt=T.BoltStats(
                acked=_none(),
                failed=_none(),
                process_ms_avg=_none(),
                executed=_none(),
                execute_ms_avg=_none(),
            )
        )
    return T.ExecutorStats(
        emitted={ALL_TIME: stream_counts(stats.get("emitted"))},
        transferred={ALL_TIME: stream_counts(stats.get("transferred"))},
        specific=specific,
        rate=0.0,
    )


def _none() -> dict[str, dict[Any, Any]]:
    return {ALL_TIME: {}}
