"""Which topologies a lost supervisor touches, so that nimbus's reaction to a lost host costs
what the host ran, not the size of the cluster (issue #15 item 4). Pure.

When supervisors only left (the /supervisors watch), nimbus reschedules only the topologies
with a slot on a supervisor that is gone; every other topology keeps its slots and resources
as fixed occupants: for it nothing this event reports has changed, and no capacity came that
a topology short of slots could use. decide.py falls back to a round over every topology when
that narrowed round leaves any topology unplaced (it could not fit, or evicted another),
because only a round over every topology may evict topologies outside the set (the eviction
rule of nimbus/cluster_scheduler.py). When a supervisor came, or offers other ports or
capacity, every topology is rescheduled at once, as before: topologies short of slots take
the new room and others spread onto the new host. Whatever else a full round would change (a
task whose beats timed out) the monitor round does, which still schedules every topology
every nimbus.monitor.freq.secs.
"""

from __future__ import annotations

from collections.abc import Mapping

from squall.records import SupervisorInfo

from .model import TopologyModel

Offer = tuple[str, tuple[int, ...], float, float]


def offer(info: SupervisorInfo) -> Offer:
    """What the scheduler sees of a supervisor (its start time and version do not count)."""
    return (info.host, tuple(info.ports), info.memory_capacity_mb, info.cpu_capacity)


def came_or_changed(
    before: Mapping[str, SupervisorInfo], after: Mapping[str, SupervisorInfo]
) -> bool:
    return any(sid not in before or offer(before[sid]) != offer(i) for sid, i in after.items())


def touched_topologies(
    topologies: Mapping[str, TopologyModel],
    before: Mapping[str, SupervisorInfo],
    after: Mapping[str, SupervisorInfo],
) -> set[str] | None:
    """Ids of the topologies with a slot on a supervisor gone between `before` and `after`;
    None when one came or changed (every topology is then rescheduled). Costs one look at
    each topology's hosts (Assignment.node_host), not at its tasks."""
    if came_or_changed(before, after):
        return None
    lost = before.keys() - after.keys()
    return {
        tid
        for tid, topology in topologies.items()
        if topology.assignment is not None and not lost.isdisjoint(topology.assignment.node_host)
    }
