"""A topology's requested and assigned resources as Storm's summaries carry them
(TopologySummary and TopologyPageInfo: requested_memonheap, assigned_cpu,
requested_generic_resources, ...): what its tasks declared, all of them and those placed.

The figures are the tasks' own declarations (StormBase's component_resources and
component_generic, what the resource-aware scheduler placed by), as the supervisors'
used_mem, used_cpu and used_generic_resources are; a topology that declares none shows 0
and no generic resources. squall declares no off-heap memory: it is 0. Pure.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any

from squall.nimbus.scheduling.generic_resources import CPU, OFFHEAP, ONHEAP
from squall.records import Assignment, StormBase

Declared = tuple[float, float, dict[str, float]]  # MB, CPU %, generic name -> amount


def topology_resources(
    base: StormBase, assignment: Assignment | None, tasks: Mapping[int, str]
) -> dict[str, Any]:
    """The Thrift fields (keyword arguments of TopologySummary and TopologyPageInfo)."""
    placed = assignment.task_slots if assignment is not None else {}
    requested = declared((base, c) for c in tasks.values())
    assigned = declared((base, c) for t, c in tasks.items() if t in placed)
    return {
        "requested_memonheap": requested[0],
        "requested_memoffheap": 0.0,
        "requested_cpu": requested[1],
        "requested_generic_resources": requested[2],
        "assigned_memonheap": assigned[0],
        "assigned_memoffheap": 0.0,
        "assigned_cpu": assigned[1],
        "assigned_generic_resources": assigned[2],
    }


def component_resources_map(base: StormBase, component: str) -> dict[str, float]:
    """What one task of `component` declared, as Storm's CommonAggregateStats and
    ComponentPageInfo carry it (their resources_map: NormalizedResourceRequest's normalized
    map, memory and CPU under Storm's names, then each generic resource)."""
    mem, cpu = base.component_resources.get(component, (0.0, 0.0))
    return {
        ONHEAP: mem,
        OFFHEAP: 0.0,
        CPU: cpu,
        **base.component_generic.get(component, {}),
    }


def declared(tasks: Iterable[tuple[StormBase, str]]) -> Declared:
    """What these tasks declared, each given as its topology's base and its component (also
    a supervisor's used figures: summaries.py)."""
    mem = cpu = 0.0
    generic: dict[str, float] = {}
    for base, component in tasks:
        task_mem, task_cpu = base.component_resources.get(component, (0.0, 0.0))
        mem, cpu = mem + task_mem, cpu + task_cpu
        for name, amount in base.component_generic.get(component, {}).items():
            generic[name] = generic.get(name, 0.0) + amount
    return mem, cpu, generic
