"""Shuffle grouping that keeps tuples near, as Storm 2's LoadAwareShuffleGrouping does.

A tuple handed to a task of the same worker costs a list append; one for another worker is
encoded, sent, received, decoded and queued again, about as much
CPU as the bolt's own work in bench/pertuple.py. So a shuffle picks its targets in the
nearest scope that has any (this worker, then this host, then every task), and moves one
scope out while the tasks in its scope are loaded on average above
`topology.localityaware.higher.bound`, one scope back in once they are below
`topology.localityaware.lower.bound` (Storm's bang-bang rule, its keys and defaults) and so
are the narrower scope's own tasks: with one local task and three remote ones Storm's rule
alone would narrow at a local load of 0.79 and widen again at 0.81, at every refresh.
`topology.disable.loadaware.messaging: true` makes shuffle plain round robin over every task
again. No racks (squall has no network topography plugin).

A task's load (backpressure.task_load, 0 to 2) is the fill of its receive queue (Storm's
load) plus the busy share of its worker's one thread: a squall worker is one thread, whose
queues stay short while it is saturated (topology.max.spout.pending bounds them), so the
queues alone would keep every tuple in a saturated spout's worker while the others idle. A
task of another worker has the load its worker last sent (in its backpressure status, every
check interval; 2 while it is congested, 1 until its worker says: Storm's not-connected).

Within its scope a shuffle weighs its targets by load, as Storm does: at each refresh a target
whose load is within NEAR_LEAST of the scope's least gains 1 weight (up to MAX_WEIGHT), any
other loses weight, so a task that falls behind gets fewer tuples within a second and a
recovered one regains its share slowly; every weight starts again at MAX_WEIGHT when the scope
changes. Unlike Storm, a target loses 1 for each NEAR_LEAST it is more loaded than the least
(Storm: SHRINK, its most, at once), and the weights are scaled after each refresh so that the
highest is MAX_WEIGHT: a busy thread's load hovers near its peers', the least loaded target
changes from one refresh to the next, and Storm's steps then drove every weight to 0 and the
shares from one extreme to the other.

A shuffle moves out to a wider scope only while the wider scope's other targets are less
loaded than its own by more than CROSSING, and within a scope a target in another worker
whose load is ROOM_BELOW or more is weighed as if CROSSING more loaded than it is (neither
in Storm): a tuple that crosses costs both workers' threads, so two workers saturated by
their own spouts keep their shuffles at home. Below ROOM_BELOW the other worker has room,
and a saturated sender gains by every tuple it hands over (sending costs it a few us, the
bolt's work it saves more), so such a target is weighed NEAR_LEAST less loaded than it is:
weighed as it is, it settled where Storm's NEAR_LEAST stops telling it from the saturated
sender's own tasks, its thread partly idle (issue 39; bench/RESULTS.md, "Scaling at equal
speed" and "Crossing between workers, row by row", for the measured figures).

The choices are a ring of about RING entries, each target's share its weight's, spread evenly
(Storm shuffles its ring at random; evenly spread, equal weights are plain round robin). The
ring is rebuilt only when a weight changed. Local-or-shuffle, as in Storm 2, is the same
over its worker's tasks alone (every task when the worker has none of them).

Pure logic: the Router asks a `LocalShuffle` for each target and hands it the loads when a
refresh is due; the loads come from the worker.
"""

from __future__ import annotations

from collections.abc import Callable, Collection, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

WORKER_LOCAL, HOST_LOCAL, EVERYTHING = 0, 1, 2
MAX_WEIGHT, SHRINK, NEAR_LEAST, RING = 100, 10, 0.05, 1000  # Storm's
CROSSING = 0.1  # the load added to a target in another worker when weighing (not Storm's)
ROOM_BELOW = 1.0  # a target in another worker loaded less has room: weighed NEAR_LEAST less


@dataclass(frozen=True)
class LocalityBounds:
    lower: float = 0.2
    higher: float = 0.8
    refresh_secs: float = 0.05  # how often the scope is reconsidered (the backpressure check)


def locality_bounds(conf: Mapping[str, Any]) -> LocalityBounds | None:
    """The topology's bounds, or None when it turned load-aware messaging off."""
    if conf.get("topology.disable.loadaware.messaging", False):
        return None
    return LocalityBounds(
        float(conf.get("topology.localityaware.lower.bound", 0.2)),
        float(conf.get("topology.localityaware.higher.bound", 0.8)),
        conf.get("topology.backpressure.check.millis", 50) / 1000,
    )


def scope_pools(
    tasks: Sequence[int], local: Collection[int], host_of: Mapping[int, str], host: str
) -> tuple[tuple[int, ...], tuple[int, ...], tuple[int, ...]]:
    """The targets in each scope, a wider scope holding the narrower ones (as in Storm)."""
    worker = tuple(t for t in tasks if t in local)
    same_host = tuple(t for t in tasks if t in local or host_of.get(t) == host)
    return worker, same_host, tuple(tasks)


def next_scope(
    scope: int,
    pools: Sequence[Sequence[int]],
    load: Callable[[int], float],
    bounds: LocalityBounds,
) -> int:
    """The scope to pick from now: the nearest with targets at first, then one step out
    while the current scope's targets are loaded above the higher bound on average (and the
    wider scope's others, with CROSSING, less), one step in while they and the narrower
    scope's targets are below the lower bound."""
    while not pools[scope] and scope < EVERYTHING:
        scope += 1
    targets = pools[scope]
    if not targets:
        return scope
    average = sum(map(load, targets)) / len(targets)
    if average > bounds.higher and scope < EVERYTHING:
        wider = [t for t in pools[scope + 1] if t not in targets]
        if not wider or sum(map(load, wider)) / len(wider) + CROSSING < average:
            return scope + 1
    if average < bounds.lower and scope > WORKER_LOCAL and pools[scope - 1]:
        narrower = pools[scope - 1]
        if sum(map(load, narrower)) / len(narrower) < bounds.lower:
            return scope - 1
    return scope


def next_weights(
    weights: Mapping[int, int],
    targets: Sequence[int],
    load: Callable[[int], float],
    here: Collection[int] = (),
) -> dict[int, int]:
    """The targets' weights after one refresh (a target without one starts at MAX_WEIGHT):
    one within NEAR_LEAST of the least loaded gains 1, any other loses 1 for each NEAR_LEAST
    it is more loaded (SHRINK at most); then all are scaled so that the highest is
    MAX_WEIGHT again. A target not `here` (this worker's, when given) loaded ROOM_BELOW or
    more counts CROSSING more loaded, one less loaded NEAR_LEAST less."""
    loads = {t: load(t) if not here or t in here else _crossed(load(t)) for t in targets}
    least = min(loads.values())
    stepped = {t: _step(weights.get(t, MAX_WEIGHT), loads[t] - least) for t in targets}
    top = max(stepped.values())
    if 0 < top < MAX_WEIGHT:  # the least loaded changed: the shares as they are, scaled up
        return {t: w * MAX_WEIGHT // top for t, w in stepped.items()}
    return stepped


def _crossed(load: float) -> float:
    """A load of another worker's target as weighed from here."""
    return load + CROSSING if load >= ROOM_BELOW else load - NEAR_LEAST


def _step(weight: int, excess: float) -> int:
    """A weight after a refresh at `excess` load over the least loaded target's."""
    if excess <= NEAR_LEAST:
        return min(MAX_WEIGHT, weight + 1)
    return max(0, weight - min(SHRINK, int(excess / NEAR_LEAST + 1e-9)))


def weighted_ring(weights: Mapping[int, int], targets: Sequence[int]) -> tuple[int, ...]:
    """About RING choices, each target's share its weight's, each target's spread evenly over
    the ring; every target once when all weights are 0."""
    total = sum(weights[t] for t in targets)
    if not total:
        return tuple(targets)
    spots: list[tuple[float, int]] = []
    for t in targets:
        n = weights[t] * RING // total
        spots.extend(((i + 0.5) / n, t) for i in range(n))
    spots.sort()
    return tuple(t for _, t in spots)


class LocalShuffle:
    """The targets of one source task's subscription: its current scope's, by weight."""

    def __init__(self, pools: Sequence[Sequence[int]], bounds: LocalityBounds) -> None:
        self.pools = tuple(tuple(p) for p in pools)
        self.bounds = bounds
        self.scope = next_scope(WORKER_LOCAL, self.pools, lambda _: 0.0, bounds)
        self.pool = self.pools[self.scope]  # every target MAX_WEIGHT: each once
        self.weights: dict[int, int] = {}
        self.turn = 0
        self.refreshed = float("-inf")

    def choose(self) -> int:
        self.turn += 1
        return self.pool[self.turn % len(self.pool)]

    def refresh(self, load: Callable[[int], float], now: float) -> None:
        """Reconsider the scope if `bounds.refresh_secs` passed since the last time."""
        if now - self.refreshed < self.bounds.refresh_secs:
            return
        self.refreshed = now
        scope = next_scope(self.scope, self.pools, load, self.bounds)
        if scope != self.scope:
            self.scope, self.weights = scope, {}  # every weight starts again
        targets = self.pools[scope]
        if not targets:  # no task of the component anywhere (yet): nothing to weigh
            return
        weights = next_weights(self.weights, targets, load, self.pools[WORKER_LOCAL])
        if weights != self.weights:
            self.weights, self.pool = weights, weighted_ring(weights, targets)
