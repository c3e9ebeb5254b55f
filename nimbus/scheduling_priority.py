"""The order topologies are scheduled in, and so who may evict whom (a topology may evict only
those after it): Storm's resource.aware.scheduler.priority.strategy, as its
DefaultSchedulingPriorityStrategy and FIFOSchedulingPriorityStrategy compute it. Pure.

Default. Users take turns: the next topology is always the one of the user with the lowest
score, score = max over CPU and memory of (what the user's topologies placed so far plus this
one request, less the user's resource.aware.scheduler.user.pools guarantee) / what the cluster
has left once those placed so far are taken from its total capacity. A user inside its
guarantee scores below 0, so every guaranteed topology comes before any beyond a guarantee,
and users beyond theirs take turns by how far beyond they are. A user's own topologies go in
(topology.priority, older first, id) order. FIFO: the same while a user is inside its
guarantee; beyond it, its topologies go youngest first and users are compared by the age of
that youngest one, so the topology up the longest is the first evicted ("first in, first
out", Storm's FIFOSchedulingPriorityStrategy exactly).

Ties keep the order of the step before, as Storm's stable sort does (users start in name
order; Storm's start in its HashMap's order, which for its tests' names is the same).
Scores need no clock: a submission time orders as an uptime does. Topologies that declare no
resources ask for nothing, so they never push a user beyond its guarantee.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field

from .scheduling_input import Need, TopologyRequest

STORM_PACKAGE = "org.apache.storm.scheduler.resource.strategies.priority."
STRATEGIES = {
    "DefaultSchedulingPriorityStrategy": "default",
    "FIFOSchedulingPriorityStrategy": "fifo",
}


class UnknownPriorityStrategy(ValueError):
    """resource.aware.scheduler.priority.strategy names a class squall does not implement."""


def storm_class(name: object, package: str, choices: Mapping[str, str]) -> str | None:
    """choices[class] for Storm's class name, given with its package or without; None for
    anything else."""
    text = str(name)
    short = text.removeprefix(package)
    if short in choices and (short == text or text.startswith(package)):
        return choices[short]
    return None


def strategy_of(name: object) -> str:
    """'default' or 'fifo' for Storm's class name (with or without its package); None is
    Storm's default. Anything else raises UnknownPriorityStrategy naming what is accepted."""
    if name is None:
        return "default"
    strategy = storm_class(name, STORM_PACKAGE, STRATEGIES)
    if strategy is not None:
        return strategy
    known = ", ".join(STORM_PACKAGE + c for c in STRATEGIES)
    raise UnknownPriorityStrategy(
        f"resource.aware.scheduler.priority.strategy: {str(name)!r:.120} is not supported; "
        f"use one of {known}"
    )


@dataclass
class _User:
    name: str
    guarantee: Need
    queue: list[TopologyRequest]  # the next one last
    demand: Mapping[str, Need]
    fifo: bool
    placed: list[float] = field(default_factory=lambda: [0.0, 0.0])
    by_age: bool = False  # FIFO: beyond the guarantee, the queue is youngest first

    def score(self, available: list[float]) -> tuple[int, float]:
        """(0, Storm's score) or, FIFO beyond the guarantee, (1, minus the submit time of
        its youngest topology): any uptime is above every negative score."""
        if available[0] <= 0 or available[1] <= 0:
            worth = float("inf")
        else:
            mem, cpu = self.demand[self.queue[-1].id]
            worth = max(
                (self.placed[1] + cpu - self.guarantee[1]) / available[1],
                (self.placed[0] + mem - self.guarantee[0]) / available[0],
            )
        if not self.fifo or worth < 0:
            return (0, worth)
        if not self.by_age:
            self.queue.sort(key=lambda r: (-r.submitted, r.id), reverse=True)
            self.by_age = True
        return (1, -self.queue[-1].submitted)


def ordered(
    requests: Sequence[TopologyRequest],
    pools: Mapping[str, Need],
    capacity: Need,
    strategy: str = "default",
) -> list[TopologyRequest]:
    """Every request in scheduling order; `capacity` is the cluster's total (MB, CPU)."""
    demand = {r.id: r.demand() for r in requests}
    mine: dict[str, list[TopologyRequest]] = {}
    for request in requests:
        mine.setdefault(request.owner, []).append(request)
    users = [
        _User(
            owner,
            pools.get(owner, (0.0, 0.0)),
            sorted(queue, key=lambda r: (r.priority, r.submitted, r.id), reverse=True),
            demand,
            strategy == "fifo",
        )
        for owner, queue in sorted(mine.items())
    ]
    available = [capacity[0], capacity[1]]
    out: list[TopologyRequest] = []
    while users:
        if strategy != "fifo" and (available[0] <= 0 or available[1] <= 0):
            # every score is infinite from here on: the sort keeps the order, so each user
            # in turn drains its queue (one pass instead of a sort per topology)
            for user in users:
                out.extend(reversed(user.queue))
            break
        # a stable sort, as Storm's Collections.sort: ties keep the last step's order
        users.sort(key=lambda u: u.score(available))
        user = users[0]
        request = user.queue.pop()
        mem, cpu = demand[request.id]
        user.placed[0] += mem
        user.placed[1] += cpu
        available[0] -= mem
        available[1] -= cpu
        out.append(request)
        if not user.queue:
            users.pop(0)
    return out
