"""Cluster-wide reads over every topology, past and present, as pure functions:
getTopologyHistory, getOwnerResourceSummaries and the error choice of getTopologyInfoWithOpts.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

from squall import thrift_api as T
from squall.records import Assignment, StormBase


def visible_history(
    submitted: Mapping[str, Mapping[str, Any]],
    live: Mapping[str, Mapping[str, Any]],
    may_read: Callable[[Mapping[str, Any]], bool],
) -> list[str]:
    """The ids, past and present, of the topologies whose conf `may_read` accepts. A live
    topology is judged by its conf now (a set-config may have changed its readers)."""
    confs = {**submitted, **live}
    return sorted(tid for tid, conf in confs.items() if may_read(conf))


def chosen_errors(errors: Mapping[str, list[Any]], choice: int | None) -> dict[str, list[Any]]:
    """GetInfoOptions.num_err_choice over TopologyInfo.errors (ErrorInfo lists): ALL (the
    default), NONE (each component with no errors), ONE (each component's newest)."""
    if choice == T.NumErrorsChoice.NONE:
        return {component: [] for component in errors}
    if choice == T.NumErrorsChoice.ONE:
        return {
            component: [max(entries, key=lambda e: e.error_time_secs)] if entries else []
            for component, entries in errors.items()
        }
    return {component: list(entries) for component, entries in errors.items()}


def owner_summaries(
    bases: Mapping[str, StormBase],
    tasks: Mapping[str, Mapping[int, str]],
    assignments: Mapping[str, Assignment],
    owner: str | None,
) -> list[Any]:
    """Per owner (the submitter nimbus recorded), its topologies, executors, tasks and
    workers; only `owner` when one is named (with zeros when it runs nothing, as in Storm).
    squall schedules no resources, so the memory and CPU figures stay unset."""
    counts: dict[str, list[int]] = {}
    if owner:
        counts[owner] = [0, 0, 0]
    for tid, base in sorted(bases.items()):
        if owner and base.owner != owner:
            continue
        row = counts.setdefault(base.owner, [0, 0, 0])
        row[0] += 1
        row[1] += len(tasks.get(tid, {}))
        row[2] += len(assignments[tid].slots()) if tid in assignments else 0
    return [
        T.OwnerResourceSummary(
            owner=name,
            total_topologies=topologies,
            total_executors=executors,
            total_tasks=executors,  # one task per executor in squall
            total_workers=workers,
        )
        for name, (topologies, executors, workers) in sorted(counts.items())
    ]
