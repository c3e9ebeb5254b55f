"""Which ports every topology's assignment uses on each supervisor, kept in nimbus's model
between events, so that a lost supervisor's decision can find the topologies on it and the
free slots without a pass over every topology (issue #15 item 4). Pure.

An Occupancy describes one `topologies` mapping, that very object (`of`): NimbusModel's
with_topology and without carry it forward at the cost of the topologies that changed, and
any other way of replacing the topologies leaves it stale, so it is rebuilt rather than
trusted (`current`). It depends on assignments only, never on which supervisors are live.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from squall.records import Assignment

Ports = Mapping[str, frozenset[int]]  # supervisor id -> ports


@dataclass(frozen=True)
class Occupancy:
    of: Mapping[str, Any]  # the topologies (id -> TopologyModel) this describes
    ports: Mapping[str, Mapping[str, frozenset[int]]]  # supervisor -> topology -> its ports
    used: Ports  # supervisor -> every port some topology's assignment names there
    resource_aware: frozenset[str]  # topologies that declare resources (component_resources)

    def on(self, supervisor: str) -> set[str]:
        """Ids of the topologies with a slot on `supervisor`."""
        return set(self.ports.get(supervisor, {}))

    def shared(self, topology_id: str, assignment: Assignment | None) -> bool:
        """Whether another topology's assignment names one of the slots of this one's
        `assignment` (only a round over every topology may settle who keeps it: the
        higher-ranked one)."""
        for sid, mine in uses(assignment).items():
            for other, theirs in self.ports.get(sid, {}).items():
                if other != topology_id and not mine.isdisjoint(theirs):
                    return True
        return False


def uses(assignment: Assignment | None) -> dict[str, frozenset[int]]:
    by_host: dict[str, set[int]] = {}
    for sid, port in set(assignment.task_slots.values()) if assignment else ():
        by_host.setdefault(sid, set()).add(port)
    return {sid: frozenset(ports) for sid, ports in by_host.items()}


def build(topologies: Mapping[str, Any]) -> Occupancy:
    """From scratch: one pass over every topology's slots."""
    empty = Occupancy({}, {}, {}, frozenset())
    return updated(empty, topologies, {tid: (None, t) for tid, t in topologies.items()})


def current(occupancy: Occupancy | None, topologies: Mapping[str, Any]) -> Occupancy:
    """`occupancy` if it describes `topologies`, else one built afresh."""
    if occupancy is not None and occupancy.of is topologies:
        return occupancy
    return build(topologies)


def updated(
    occupancy: Occupancy,
    topologies: Mapping[str, Any],
    changed: Mapping[str, tuple[Any, Any]],
) -> Occupancy:
    """The occupancy of `topologies`, which differ from `occupancy.of` only in `changed`
    (id -> (old TopologyModel or None, new one or None)). Costs the changed topologies'
    slots and one copy of the per-supervisor maps when a slot moved, never a pass over the
    topologies that stayed."""
    aware = set(occupancy.resource_aware)
    moves: dict[str, tuple[Ports, Ports]] = {}
    for tid, (old, new) in changed.items():
        aware.discard(tid)
        if new is not None and new.base.component_resources:
            aware.add(tid)
        before = old.assignment if old is not None else None
        after = new.assignment if new is not None else None
        if before is not after:
            moves[tid] = (uses(before), uses(after))
    if not moves:
        return Occupancy(topologies, occupancy.ports, occupancy.used, frozenset(aware))
    ports = dict(occupancy.ports)
    hosts = {sid for before, after in moves.values() for sid in (*before, *after)}
    for sid in hosts:
        on = dict(ports.get(sid, {}))
        for tid, (_, after) in moves.items():
            on.pop(tid, None)
            if sid in after:
                on[tid] = after[sid]
        if on:
            ports[sid] = on
        else:
            ports.pop(sid, None)
    used = dict(occupancy.used)
    for sid in hosts:
        if sid in ports:
            used[sid] = frozenset().union(*ports[sid].values())
        else:
            used.pop(sid, None)
    return Occupancy(topologies, ports, used, frozenset(aware))
