"""Generic resources (Storm's supervisor.resources.map and topology.component.resources.map,
e.g. {"gpu.count": 2}): what each host has free, what a task takes, and Storm's
rare-resource affinity for GenericResourceAwareStrategy. Pure.

Unlike memory and CPU a generic resource is charged per task, with no worker floor, and a
host offers only what its supervisor reports: a resource it does not name it has 0 of.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Mapping

from squall.nimbus.scheduling.scheduling_input import Cluster, TopologyRequest
from squall.records import Slot

EPSILON = 1e-9
# names Storm's normalization reads as memory or CPU, never generic resources (its
# NormalizedResourceRequest.removeNonGenericResources): squall reads those from their own keys
# (Storm's Constants.COMMON_CPU_RESOURCE_NAME, COMMON_ONHEAP_MEMORY_RESOURCE_NAME, ...)
CPU, ONHEAP, OFFHEAP = "cpu.pcore.percent", "onheap.memory.mb", "offheap.memory.mb"
TOTAL_MEMORY = "memory.mb"  # a supervisor's (COMMON_TOTAL_MEMORY_RESOURCE_NAME)
NOT_GENERIC = frozenset({CPU, ONHEAP, OFFHEAP, TOTAL_MEMORY})
GenericFree = dict[str, dict[str, float]]  # host -> resource name -> amount free


def capacities(cluster: Cluster) -> GenericFree:
    """The offer of every host that has one, as a fresh mutable map (a host it lacks
    offers nothing)."""
    return {sid: dict(host.generic) for sid, host in cluster.hosts.items() if host.generic}


def fits(free: Mapping[str, float], need: Mapping[str, float]) -> bool:
    return all(amount <= free.get(name, 0.0) + EPSILON for name, amount in need.items())


def take(free: dict[str, float], need: Mapping[str, float], sign: float = 1.0) -> None:
    """Charge `need` to one host's `free` (sign -1: give it back)."""
    for name, amount in need.items():
        free[name] = free.get(name, 0.0) - sign * amount


def charges(request: TopologyRequest, placement: Mapping[int, Slot]) -> GenericFree:
    """host -> resource -> what `placement`'s tasks take there (empty: nothing generic)."""
    out: GenericFree = {}
    if not request.generic:
        return out
    components = map(request.tasks.get, placement.keys())
    for (slot, component), count in Counter(
        zip(placement.values(), components, strict=True)
    ).items():
        need = request.generic.get(component or "", {})
        if need:
            host = out.setdefault(slot[0], {})
            for name, amount in need.items():
                host[name] = host.get(name, 0.0) + amount * count
    return out


def give_back(free: GenericFree, taken: GenericFree) -> None:
    """Add `taken` back to `free` (or, over an empty map, sum it up)."""
    for sid, need in taken.items():
        take(free.setdefault(sid, {}), need, -1.0)


def unoffered(request: TopologyRequest, cluster_hosts: Mapping[str, Mapping[str, float]]) -> str:
    """Why `request` can never be placed on these hosts' generic offers, naming the resource
    (a task needs one no supervisor offers, or more than any one offers); '' if it can."""
    for component, need in sorted(request.generic.items()):
        if component not in set(request.tasks.values()):
            continue
        for name, amount in sorted(need.items()):
            if amount <= EPSILON:
                continue
            most = max((offer.get(name, 0.0) for offer in cluster_hosts.values()), default=0.0)
            if most <= EPSILON:
                return (
                    f"Not enough resources to schedule: component {component!r} needs "
                    f"{amount:g} {name} per task and no supervisor offers {name} "
                    "(supervisor.resources.map)"
                )
            if amount > most + EPSILON:
                return (
                    f"Not enough resources to schedule: component {component!r} needs "
                    f"{amount:g} {name} per task; the most one supervisor offers is {most:g}"
                )
    return ""


def rare_penalty(
    free: Mapping[str, float], need: Mapping[str, float], totals: Mapping[str, float]
) -> float:
    """Storm's updateForRareResourceAffinity, as a cost: the share of the cluster's free
    generic resources a task does not ask for that this host holds (a task that needs no
    GPU keeps off the GPU hosts while others fit), less the share of those it asks for."""
    cost = 0.0
    for name, total in totals.items():
        if total > EPSILON:
            share = max(free.get(name, 0.0), 0.0) / total
            cost += -share if name in need else share
    return cost


def totals(free: Mapping[str, Mapping[str, float]], hosts: set[str]) -> dict[str, float]:
    out: dict[str, float] = {}
    for sid in hosts:
        for name, amount in free.get(sid, {}).items():
            out[name] = out.get(name, 0.0) + max(amount, 0.0)
    return out


def described(need: Mapping[str, float]) -> str:
    return ", ".join(f"{amount:g} {name}" for name, amount in sorted(need.items()))
