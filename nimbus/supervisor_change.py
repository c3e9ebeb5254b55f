"""Which topologies a supervisor change touches, so that nimbus's reaction to a lost host
costs what the host ran, not the size of the cluster (issue #15 item 4). Pure.

A supervisor change (the /supervisors watch) reschedules only:
- the topologies with a slot on a supervisor that is gone, or whose ports or capacity
  changed (their tasks there must move, or may no longer fit), and
- when a supervisor came or changed (capacity may have appeared), the topologies that are
  not fully scheduled (new, evicted, short of slots or resources).
Every other topology keeps its slots and resources as fixed occupants: for it nothing this
event reports has changed. decide.py falls back to a round over every topology when a
narrowed round leaves any topology short (it could not fit, or evicted another), because
only a round over every topology may evict topologies outside the set (the eviction rule of
nimbus/cluster_scheduler.py). Whatever else a full round would change (a task whose beats
timed out, spreading onto a new host) the monitor round does, which still schedules every
topology every nimbus.monitor.freq.secs.
"""

from __future__ import annotations

from collections.abc import Mapping

from squall.records import SupervisorInfo

from .cluster_scheduler import FULLY_SCHEDULED
from .model import TopologyModel

Offer = tuple[str, tuple[int, ...], float, float]


def offer(info: SupervisorInfo) -> Offer:
    """What the scheduler sees of a supervisor (its start time and version do not count)."""
    return (info.host, tuple(info.ports), info.memory_capacity_mb, info.cpu_capacity)


def changed_supervisors(
    before: Mapping[str, SupervisorInfo], after: Mapping[str, SupervisorInfo]
) -> tuple[set[str], bool]:
    """(supervisors gone or changed, whether any came or changed)."""
    gone_or_changed = {
        sid for sid, info in before.items() if sid not in after or offer(after[sid]) != offer(info)
    }
    grew = any(sid not in before or offer(before[sid]) != offer(i) for sid, i in after.items())
    return gone_or_changed, grew


def touched_topologies(
    topologies: Mapping[str, TopologyModel],
    before: Mapping[str, SupervisorInfo],
    after: Mapping[str, SupervisorInfo],
) -> set[str]:
    """Ids of the topologies a change from `before` to `after` may move or place. Costs one
    look at each topology's hosts (Assignment.node_host), not at its tasks."""
    lost, grew = changed_supervisors(before, after)
    touched = set()
    for tid, topology in topologies.items():
        assignment = topology.assignment
        short = assignment is None or topology.sched_status != FULLY_SCHEDULED
        on_lost = assignment is not None and not lost.isdisjoint(assignment.node_host)
        if on_lost or (grew and short):
            touched.add(tid)
    return touched
