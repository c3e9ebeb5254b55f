"""Which topologies a lost supervisor touches, so that nimbus's reaction to a lost host costs
what the host ran, not the size of the cluster (issue #15 item 4). Pure.

When supervisors only left (the /supervisors watch), nimbus reschedules only the topologies
with a slot on a supervisor that is gone; every other topology keeps its slots and resources
as fixed occupants: for it nothing this event reports has changed, and no capacity came that
a topology short of slots could use. decide.py falls back to a round over every topology when
that narrowed round leaves any topology unplaced (it could not fit, or evicted another),
because only a round over every topology may evict topologies outside the set (the eviction
rule of nimbus/scheduling/cluster_scheduler.py). When a supervisor came, or offers other ports or
capacity, every topology is rescheduled at once, as before: topologies short of slots take
the new room and others spread onto the new host. Whatever else a full round would change (a
task whose beats timed out) the monitor round does, which still schedules every topology
every nimbus.monitor.freq.secs.
"""

from __future__ import annotations

from collections.abc import Mapping

from squall.nimbus.core.model import NimbusSettings, TopologyModel
from squall.nimbus.core.occupancy import Occupancy, uses
from squall.nimbus.scheduling.resource_conf import user_pools
from squall.nimbus.scheduling.scheduling_input import Cluster, Host
from squall.records import SupervisorInfo

Offer = tuple[str, tuple[int, ...], float, float]


def offer(info: SupervisorInfo) -> Offer:
    """What the scheduler sees of a supervisor (its start time and version do not count)."""
    return (info.host, tuple(info.ports), info.memory_capacity_mb, info.cpu_capacity)


def came_or_changed(
    before: Mapping[str, SupervisorInfo], after: Mapping[str, SupervisorInfo]
) -> bool:
    if after.items() <= before.items():  # in C; the records read before are the same objects
        return False
    return any(sid not in before or offer(before[sid]) != offer(i) for sid, i in after.items())


def touched_topologies(
    occupancy: Occupancy,
    before: Mapping[str, SupervisorInfo],
    after: Mapping[str, SupervisorInfo],
) -> set[str] | None:
    """Ids of the topologies with a slot on a supervisor gone between `before` and `after`;
    None when one came or changed (every topology is then rescheduled). Costs the lost
    supervisors' entries in the occupancy kept between events, not a look at every topology."""
    if came_or_changed(before, after):
        return None
    return set().union(*(occupancy.on(sid) for sid in before.keys() - after.keys()))


def narrowed_cluster(
    occupancy: Occupancy,
    rescheduled: Mapping[str, TopologyModel],
    supervisors: Mapping[str, SupervisorInfo],
    settings: NimbusSettings,
) -> Cluster | None:
    """The scheduler's whole input besides the rescheduled topologies' requests: every live
    slot that no other topology's assignment names (the free ones) or that one of
    `rescheduled` holds, in the cluster's slot order. For slot-count topologies the cluster
    scheduler's outcome for them is then the one it gives with every other topology a fixed
    occupant (those only reserve their slots, so what is left to the rescheduled ones is
    exactly this), without a request per topology or a pass over every slot. None where that
    does not hold: a topology declares resources (free memory and CPU would then depend on
    every topology's tasks), or a rescheduled topology shares a slot with another one (who
    keeps it depends on rank)."""
    if occupancy.resource_aware:
        return None
    theirs: dict[str, set[int]] = {}
    for tid, topology in rescheduled.items():
        if occupancy.shared(tid, topology.assignment):
            return None
        for sid, ports in uses(topology.assignment).items():
            theirs.setdefault(sid, set()).update(ports)
    used, hosts = occupancy.used, {}
    for sid, info in supervisors.items():
        taken = used.get(sid, frozenset())
        mine = theirs.get(sid, ())
        if not mine and taken.issuperset(info.ports):  # a full host: most of a busy cluster
            continue
        usable = tuple(p for p in info.ports if p not in taken or p in mine)
        hosts[sid] = Host(usable, info.memory_capacity_mb, info.cpu_capacity)
    return Cluster(hosts, user_pools(settings))
