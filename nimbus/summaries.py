"""The Thrift summaries nimbus answers reads with (getClusterInfo, getTopologyInfo), built
from the controller's model as pure functions: time is passed in."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from squall import thrift_api as T
from squall.liveness import ROUNDING_SLACK_SECS, beat_is_current
from squall.records import Assignment, Slot, StormBase, SupervisorInfo, WorkerBeat
from squall.storm_version import storm_compatible


def cluster_summary(
    bases: Mapping[str, StormBase],
    assignments: Mapping[str, Assignment],
    tasks: Mapping[str, Mapping[int, str]],
    supervisors: Mapping[str, SupervisorInfo],
    nimbuses: list[Any],
    now: float,
) -> Any:
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
) -> Any:
    """`spouts` names the spout components; every other component (the acker included) is a
    bolt, which decides whether an executor's stats carry SpoutStats or BoltStats."""
    now_secs = int(now)
    executors = []
    for task, component in sorted(tasks.items()):
        slot = assignment.task_slots.get(task) if assignment else None
        beat = beats.get(slot) if slot else None
        assigned_for = now_secs - assignment.task_start_secs.get(task, now_secs) if slot else 0
        # the worker must have started for this assignment; both times are durations
        # back from now, so no two clocks are compared
        fresh = beat is not None and beat_is_current(
            -beat.uptime_secs, -assigned_for, ROUNDING_SLACK_SECS
        )
        stats = beat.tasks.get(task) if fresh else None
        executors.append(
            T.ExecutorSummary(
                executor_info=T.ExecutorInfo(task_start=task, task_end=task),
                component_id=component,
                host=assignment.node_host.get(slot[0], "") if slot else "",
                port=slot[1] if slot else 0,
                uptime_secs=assigned_for,
                stats=_executor_stats(stats, component in spouts) if stats else None,
            )
        )
    return T.TopologyInfo(
        id=tid,
        name=base.name,
        uptime_secs=max(0, now_secs - base.launch_time_secs),
        executors=executors,
        status=base.status.upper(),
        errors={
            component: [
                T.ErrorInfo(
                    error=e["error"],
                    error_time_secs=int(e["time_secs"]),
                    host=e.get("host"),
                    port=e.get("port"),
                )
                for e in entries
            ]
            for component, entries in errors.items()
        },
    )


ALL_TIME = ":all-time"


def _executor_stats(stats: Mapping[str, Any], spout: bool) -> Any:
    """Storm's ExecutorStats, whose `specific` is required: a Storm Java client refuses the
    whole TopologyInfo without it. squall counts acks, fails and executes per task, not per
    stream, so Storm's per-stream maps stay empty rather than invent a split; latencies are
    not measured."""
    if spout:
        specific = T.ExecutorSpecificStats(
            spout=T.SpoutStats(acked=_none(), failed=_none(), complete_ms_avg=_none())
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
        emitted={ALL_TIME: _counts(stats.get("emitted"))},
        transferred={ALL_TIME: _counts(stats.get("transferred"))},
        specific=specific,
        rate=0.0,
    )


def _none() -> dict[str, dict[Any, Any]]:
    return {ALL_TIME: {}}


def _counts(raw: Any) -> dict[str, int]:
    """A stream -> count map from a worker's heartbeat. Heartbeats are written by anyone who
    can write ZooKeeper: entries that are not a stream name and a count are left out rather
    than failing getTopologyInfo."""
    if not isinstance(raw, Mapping):
        return {}
    return {
        k: v
        for k, v in raw.items()
        if isinstance(k, str)
        and isinstance(v, int)
        and not isinstance(v, bool)
        and -(2**63) <= v < 2**63
    }
