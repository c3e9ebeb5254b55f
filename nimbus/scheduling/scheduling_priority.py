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

A topology that declares no resources (squall's slot-count ones; Storm has none) asks for
nothing, so it never pushes its user beyond a guarantee; among users tied with it, such
topologies go by (priority, older first, id) across users, as squall ordered them before.
Otherwise ties keep the order of the step before, as Storm's stable sort does (users start
in name order; Storm's start in its HashMap's order, which for its tests' names is the same).
Scores need no clock: a submission time orders as an uptime does.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field

from squall.nimbus.scheduling.scheduling_input import Need, TopologyRequest

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


NOTHING = (0.0, 0.0)


def _rank_key(request: TopologyRequest) -> tuple[int, float, str]:
    return (request.priority, request.submitted, request.id)


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
            sorted(queue, key=_rank_key, reverse=True),
            demand,
            strategy == "fifo",
        )
        for owner, queue in sorted(mine.items())
    ]
    available = [capacity[0], capacity[1]]
    out: list[TopologyRequest] = []
    asks_nothing = sum(1 for r in requests if demand[r.id] == NOTHING)
    while users:
        if strategy != "fifo" and not asks_nothing and min(available) <= 0:
            # every score is infinite from here on: the sort keeps the order, so each user
            # in turn drains its queue (one pass instead of a sort per topology)
            for user in users:
                out.extend(reversed(user.queue))
            break
        # a stable sort, as Storm's Collections.sort: ties keep the last step's order
        scored = sorted(((u.score(available), u) for u in users), key=lambda pair: pair[0])
        users[:] = [u for _, u in scored]
        user = users[0]
        if demand[user.queue[-1].id] == NOTHING:  # squall's slot-count topologies (Storm
            # has none): among users tied with it, the best (priority, age, id) goes
            best = scored[0][0]
            tied = [u for s, u in scored if s == best and demand[u.queue[-1].id] == NOTHING]
            user = min(tied, key=lambda u: _rank_key(u.queue[-1]))
        request = user.queue.pop()
        mem, cpu = demand[request.id]
        asks_nothing -= (mem, cpu) == NOTHING
        user.placed[0] += mem
        user.placed[1] += cpu
        available[0] -= mem
        available[1] -= cpu
        out.append(request)
        if not user.queue:
            users.remove(user)
    return out
