"""Every topology scheduled from one cluster snapshot (Storm's IScheduler.schedule(topologies,
cluster)): pure, deterministic, and minimal-move per topology. docs/architecture.md, "Scheduling".

Order. Topologies are ranked as Storm's resource.aware.scheduler.priority.strategy ranks
them (nimbus/scheduling/scheduling_priority.py): users inside their
resource.aware.scheduler.user.pools guarantee first, then users by how far beyond it they are; a
user's own topologies by topology.priority (lower numbers first: Storm's 0 is the highest), then
older first.

Two passes.
1. Reserve: in rank order, every topology claims the slots of its existing placement on live
   supervisors, and a resource-aware one the memory and CPU of every task it has there, its
   dead tasks too (they restart on their own slot while it is alive and fits; a task that no
   longer fits its host is not charged, and the topology can then no longer keep its old
   assignment as it is). Nothing a topology runs is ever taken by another one's new tasks,
   except by eviction below.
2. Place: in rank order, each topology being rescheduled picks from its own slots and the
   unclaimed ones: by slot count (nimbus/scheduling/scheduler.py) when it declares no resources,
   else by nimbus/scheduling/resource_fit.py (packed, Storm's DefaultResourceAwareStrategy) or,
   under ConstraintSolverStrategy, nimbus/scheduling/constraint_solver.py. Slots it does not use go
   back to the pool for the next.

Cannot fit. A resource-aware topology whose tasks do not all fit is not placed at all: it
keeps what it had when all of that is still charged (nothing, if new, or if part of it no
longer fits: a kept assignment is never one the hosts cannot hold), and its status says why.
Eviction rule (Storm's): in a round that reschedules them, it may evict any topology ranked
after it, lowest-ranked first, only if it then fits, and only those whose room its placement uses (a
victim whose slots and resources it did not take keeps them: no eviction frees nothing
usable). The freed room goes to it in the same round; an evicted topology is then placed
again, like a new one, in its own rank of the same round, so no topology ranked below it
takes the room it left; if that fails its status names the topology it made room for.
Every outcome obeys nimbus/scheduling/schedule_invariants.py.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import replace

from squall.nimbus.scheduling import generic_resources as gen
from squall.nimbus.scheduling.constraint_solver import solve
from squall.nimbus.scheduling.resource_fit import EPSILON, Fit, charges, cpu_added, place
from squall.nimbus.scheduling.scheduler import schedule
from squall.nimbus.scheduling.scheduling_input import (
    NO_GENERIC,
    UNBOUNDED,
    Cluster,
    Need,
    Outcome,
    TopologyRequest,
)
from squall.nimbus.scheduling.scheduling_priority import ordered
from squall.records import Slot

FULLY_SCHEDULED = "Fully Scheduled"


def rank(requests: Sequence[TopologyRequest], cluster: Cluster) -> list[TopologyRequest]:
    """Scheduling order (nimbus/scheduling/scheduling_priority.py): Storm's priority strategy over
    the cluster's total memory and CPU."""
    capacity = (
        sum(h.memory_mb for h in cluster.hosts.values()),
        sum(h.cpu for h in cluster.hosts.values()),
    )
    return ordered(requests, cluster.user_pools, capacity, cluster.priority_strategy)


def beyond_guarantee(requests: Sequence[TopologyRequest], pools: Mapping[str, Need]) -> set[str]:
    """Ids of the topologies past their owner's guarantee (a user with no pool has none)."""
    beyond: set[str] = set()
    by_owner: dict[str, list[TopologyRequest]] = {}
    for request in requests:
        by_owner.setdefault(request.owner, []).append(request)
    for owner, mine in by_owner.items():
        pool_mem, pool_cpu = pools.get(owner, (0.0, 0.0))
        mem = cpu = 0.0
        for request in sorted(mine, key=lambda r: (r.priority, r.id)):
            need_mem, need_cpu = request.demand()
            mem, cpu = mem + need_mem, cpu + need_cpu
            if mem > pool_mem or cpu > pool_cpu:
                beyond.add(request.id)
    return beyond


class _Round:
    """The mutable bookkeeping of one call: who holds which slot, what each host has free.

    Each topology's slots and the unheld ones are kept as sets beside `owner`, so a
    topology's candidates cost its own slots plus the free ones, not a pass over every slot
    of the cluster per topology (that pass was most of a lost supervisor's decision at 5000
    workers: bench/RESULTS.md, slice F)."""

    def __init__(self, cluster: Cluster) -> None:
        self.floor = cluster.min_worker_cpu  # storm.worker.min.cpu.pcore.percent
        self.slots = cluster.slots()
        self.index = {slot: i for i, slot in enumerate(self.slots)}
        self.live = set(self.slots)
        self.owner: dict[Slot, str] = {}
        self.held: dict[str, set[Slot]] = {}
        self.unheld: set[Slot] = set(self.slots)
        self.free: dict[str, tuple[float, float]] = {
            sid: (host.memory_mb, host.cpu) for sid, host in cluster.hosts.items()
        }
        self.generic = gen.capacities(cluster)  # generic resources free per host
        self.offered = {sid: host.generic for sid, host in cluster.hosts.items() if host.generic}
        self.kept: dict[str, dict[int, Slot]] = {}  # live tasks charged where they run
        self.pending: dict[str, dict[int, Slot]] = {}  # dead tasks charged on their slot
        self.whole: dict[str, bool] = {}  # every task on a live slot is held and charged

    def _hold(self, slot: Slot, tid: str) -> None:
        self.owner[slot] = tid
        self.held.setdefault(tid, set()).add(slot)
        self.unheld.discard(slot)

    def _drop(self, slot: Slot) -> None:
        self.held[self.owner.pop(slot)].discard(slot)
        self.unheld.add(slot)

    def reserve(self, request: TopologyRequest) -> None:
        """Claim `request`'s live slots and charge their hosts for every task it keeps
        there: its live tasks, then its dead ones (they restart, on their own slot while it
        is alive and fits: `pending`). Nothing it keeps goes uncharged, so what it keeps when
        it cannot be placed again never over-commits a host; where a task no longer fits
        (a smaller supervisor, a slot a higher-ranked topology also names) the topology can
        no longer keep its old assignment as it is (`whole` False)."""
        owner, live = self.owner, self.live  # no set difference with owner.keys(): that
        # copies every held slot of the cluster, once per topology
        mine = {s for s in set(request.existing.values()) if s in live and s not in owner}
        owner.update(dict.fromkeys(mine, request.id))  # _hold for every slot, in C
        self.held.setdefault(request.id, set()).update(mine)
        self.unheld -= mine
        self.pending[request.id] = {}
        self.whole[request.id] = True
        if not request.resource_aware:  # scheduler.schedule finds its live tasks itself
            self.kept[request.id] = {}
            return
        alive = request.alive
        kept: dict[int, Slot] = {}
        pending: dict[int, Slot] = {}
        heap: dict[Slot, float] = {}
        worker_cpu: dict[Slot, float] = {}
        generic = request.generic  # most topologies declare none: one test per task
        dead_last = sorted(request.existing)  # live tasks first: they keep their room
        if alive is not None:
            dead_last.sort(key=alive.__contains__, reverse=True)  # stable: ids stay sorted
        for task in dead_last:
            slot = request.existing[task]
            if task not in request.tasks or slot not in live:
                continue
            if self.owner.get(slot) != request.id:
                self.whole[request.id] = False
                continue
            mem, cpu = request.need(task)
            need = request.generic_need(task) if generic else NO_GENERIC
            host_mem, host_cpu = self.free[slot[0]]
            worker = heap.get(slot, 0.0) + mem
            added = cpu_added(worker_cpu.get(slot), cpu, self.floor)
            fits = (
                mem <= host_mem + EPSILON
                and added <= host_cpu + EPSILON
                and worker <= request.worker_heap_mb + EPSILON
                and (not need or gen.fits(self.generic.get(slot[0], {}), need))
            )
            if request.reschedule and not fits:
                self.whole[request.id] = False
                continue
            self.free[slot[0]] = (host_mem - mem, host_cpu - added)
            if need:
                gen.take(self.generic.setdefault(slot[0], {}), need)
            heap[slot] = worker
            worker_cpu[slot] = worker_cpu.get(slot, 0.0) + cpu
            if alive is not None and task not in alive:
                pending[task] = slot
            else:
                kept[task] = slot
        self.kept[request.id] = kept
        self.pending[request.id] = pending

    def _give_back(self, request: TopologyRequest, tasks: Mapping[int, Slot]) -> None:
        for sid, (mem, cpu) in charges(request, tasks, self.floor).items():
            host_mem, host_cpu = self.free[sid]
            self.free[sid] = (host_mem + mem, host_cpu + cpu)
        gen.give_back(self.generic, gen.charges(request, tasks))

    def release(self, request: TopologyRequest) -> None:
        """Give back everything `request` holds (it is evicted, or keeps nothing)."""
        for slot in list(self.held.get(request.id, ())):
            self._drop(slot)
        if request.resource_aware:
            charged = {**self.kept.pop(request.id, {}), **self.pending.pop(request.id, {})}
            self._give_back(request, charged)
        self.kept[request.id] = {}
        self.pending[request.id] = {}
        self.whole[request.id] = False  # nothing of its old assignment is held any more

    def restorable(self, request: TopologyRequest) -> bool:
        """Whether `request`, released, could reserve all it had again beside what the
        others hold now (then its eviction freed nothing its evictor uses)."""
        slots = {s for s in request.existing.values() if s in self.live}
        if any(s in self.owner for s in slots):
            return False
        if not request.resource_aware:
            return True
        heap: dict[Slot, float] = {}
        back = {t: s for t, s in request.existing.items() if t in request.tasks and s in self.live}
        for task, slot in back.items():
            heap[slot] = heap.get(slot, 0.0) + request.need(task)[0]
        need = charges(request, back, self.floor)
        if any(mem > request.worker_heap_mb + EPSILON for mem in heap.values()):
            return False
        taken = gen.charges(request, back)
        if not all(gen.fits(self.generic.get(sid, {}), got) for sid, got in taken.items()):
            return False
        return all(
            mem <= self.free[sid][0] + EPSILON and cpu <= self.free[sid][1] + EPSILON
            for sid, (mem, cpu) in need.items()
        )

    def fit(self, request: TopologyRequest, candidates: list[Slot]) -> Fit:
        """`request` placed on `candidates`: its kept live tasks stay, its dead ones restart
        on their own slot where that is a candidate (else their charge is given back first
        and they go where they fit)."""
        kept = self.kept.get(request.id, {})
        allowed = set(candidates)
        restart: dict[int, Slot] = {}
        moving: dict[int, Slot] = {}
        for task, slot in self.pending.get(request.id, {}).items():
            (restart if slot in allowed else moving)[task] = slot
        if request.generic:
            never = gen.unoffered(request, self.offered)
            if never:
                return Fit(None, dict(self.free), never)
        free = dict(self.free)
        generic = self.generic
        if moving:  # give back their charge: what all charged took less what stays takes
            before = charges(request, {**kept, **self.pending[request.id]}, self.floor)
            after = charges(request, {**kept, **restart}, self.floor)
            for sid, (mem, cpu) in before.items():
                left_mem, left_cpu = after.get(sid, (0.0, 0.0))
                host_mem, host_cpu = free[sid]
                free[sid] = (host_mem + mem - left_mem, host_cpu + cpu - left_cpu)
            if request.generic:
                generic = {sid: dict(v) for sid, v in generic.items()}
                gen.give_back(generic, gen.charges(request, moving))
        own = set(kept.values()) - allowed  # live tasks stay on a slot it would avoid
        if own:
            candidates = sorted(allowed | own, key=self.index.__getitem__)
        if request.constraints is not None:  # ConstraintSolverStrategy
            rules = request.constraints
            solved = solve(request, candidates, {**kept, **restart}, free, self.floor, rules)
            return _with_generic(request, solved, generic, {**kept, **restart})
        return place(request, candidates, {**kept, **restart}, free, self.floor, generic)

    def holding(self) -> set[str]:
        return {tid for tid, slots in self.held.items() if slots}

    def candidates(self, request: TopologyRequest) -> list[Slot]:
        """Its own slots and the unheld ones, in the cluster's slot order."""
        return sorted(self.held.get(request.id, set()) | self.unheld, key=self.index.__getitem__)

    def claim(self, request: TopologyRequest, placement: Mapping[int, Slot]) -> None:
        used = set(placement.values())
        for slot in list(self.held.get(request.id, ())):
            if slot not in used:
                self._drop(slot)
        for slot in used - self.held.get(request.id, set()):
            if slot in self.unheld:
                self._hold(slot, request.id)

    def copy(self) -> _Round:
        twin = object.__new__(_Round)
        twin.slots, twin.live, twin.index = self.slots, self.live, self.index
        twin.floor = self.floor
        twin.owner, twin.free = dict(self.owner), dict(self.free)
        twin.generic = {sid: dict(v) for sid, v in self.generic.items()}
        twin.offered = self.offered
        twin.held = {tid: set(slots) for tid, slots in self.held.items()}
        twin.unheld = set(self.unheld)
        twin.kept = {tid: dict(k) for tid, k in self.kept.items()}
        twin.pending = {tid: dict(k) for tid, k in self.pending.items()}
        twin.whole = dict(self.whole)
        return twin


def schedule_all(requests: Sequence[TopologyRequest], cluster: Cluster) -> dict[str, Outcome]:
    """An Outcome for every topology with `reschedule` set (and for every one evicted)."""
    ranked = rank(requests, cluster)
    state = _Round(cluster)
    for request in ranked:
        state.reserve(request)
    caps = _SlotCaps(cluster, ranked, state)
    outcomes: dict[str, Outcome] = {}
    evicted_by: dict[str, TopologyRequest] = {}
    for i, request in enumerate(ranked):
        if not request.reschedule or request.id in outcomes:
            continue
        allowed = caps.left(request)
        candidates = _preferred(request, state.candidates(request), allowed)
        if not request.resource_aware:
            placement = schedule(
                request.tasks,
                candidates,
                min(request.max_workers, allowed),
                request.existing,
                request.alive,
            )
            state.claim(request, placement)
            caps.use(request, placement)
            status = caps.status(request, placement) or _slot_status(request, placement)
            if request.id in evicted_by and not placement:
                outcomes[request.id] = Outcome({}, _evicted(evicted_by[request.id]), placed=False)
            else:
                outcomes[request.id] = Outcome(placement, status)
            continue
        fit = state.fit(request, candidates)
        if fit.placement is None and len(candidates) < len(state.candidates(request)):
            fit = state.fit(request, state.candidates(request))
        if fit.placement is not None and len(set(fit.placement.values())) > allowed:
            status = caps.refusal(request, len(set(fit.placement.values())))
            outcomes[request.id] = _unplaced(request, state, status)
            continue
        evicted: list[TopologyRequest] = []
        if fit.placement is None and allowed > 0:  # Storm: any topology ranked after it
            victims = [v for v in ranked[i + 1 :] if v.reschedule and v.id not in outcomes]
            fit, state, evicted = _evict_for(request, victims, state, fit)
        if fit.placement is None:
            reason = _evicted(evicted_by[request.id]) if request.id in evicted_by else fit.reason
            outcomes[request.id] = _unplaced(request, state, reason)
            continue
        state.free = dict(fit.free)
        if request.generic:
            state.generic = fit.generic
        state.claim(request, fit.placement)
        caps.use(request, fit.placement)
        outcomes[request.id] = Outcome(fit.placement, FULLY_SCHEDULED)
        # Only the victims whose room it now uses stay evicted: the others reserve all they
        # had again (their eviction would have freed nothing usable). The evicted ones are
        # placed again, like new ones, in their own rank this round, so the room they leave
        # goes to no topology ranked below them.
        for victim in reversed(evicted):  # the highest-ranked first
            if state.restorable(victim):
                state.reserve(victim)
            else:
                evicted_by[victim.id] = request
    return outcomes


def _with_generic(
    request: TopologyRequest, fit: Fit, generic: gen.GenericFree, kept: Mapping[int, Slot]
) -> Fit:
    """The constraint solver's placement, refused when its new tasks need more generic
    resources than a host has free (the solver itself checks memory and CPU only)."""
    if fit.placement is None or not request.generic:
        return fit if fit.placement is None else replace(fit, generic=generic)
    after = {sid: dict(v) for sid, v in generic.items()}
    new = {t: s for t, s in fit.placement.items() if kept.get(t) != s}
    for sid, need in gen.charges(request, new).items():
        host = after.setdefault(sid, {})
        if not gen.fits(host, need):
            return Fit(
                None,
                fit.free,
                f"Not enough resources to schedule: {sid} lacks "
                f"{gen.described(need)} for its tasks under ConstraintSolverStrategy",
            )
        gen.take(host, need)
    return replace(fit, generic=after)


def _evicted(evictor: TopologyRequest) -> str:
    return (
        f"Evicted to make room for {evictor.id} (topology.priority {evictor.priority}); "
        "waiting for free resources"
    )


def _unplaced(request: TopologyRequest, state: _Round, reason: str) -> Outcome:
    """`request` could not be placed: it keeps its old assignment where all of it is still
    held and charged (a dead task's memory too), else it keeps nothing and gives back what
    it held, so that no host runs more than it has."""
    if state.whole.get(request.id, True):
        return Outcome(dict(request.existing), reason, placed=False)
    state.release(request)
    return Outcome({}, reason, placed=False)


def _preferred(request: TopologyRequest, candidates: list[Slot], allowed: int) -> list[Slot]:
    """The candidates less those `request` avoids, when the rest still give it every worker
    it may have (a packed resource-aware topology: when any is left, since it needs no set
    number; schedule_all tries every candidate when the rest do not fit); else all of them."""
    if not request.avoid:
        return candidates
    rest = [slot for slot in candidates if not request.avoids(slot)]
    if request.max_workers >= UNBOUNDED:
        return rest or candidates
    wanted = min(request.num_workers, len(request.tasks), allowed)
    return rest if len(rest) >= wanted else candidates


class _SlotCaps:
    """nimbus.slots.max.per.user within one call: the slots each owner's topologies hold.
    Topologies kept as they are count with what they reserved; a rescheduled one counts
    once placed, so an owner's topologies, in rank order, share what the cap leaves."""

    def __init__(self, cluster: Cluster, ranked: Sequence[TopologyRequest], state: _Round):
        self.cap, self.exempt = cluster.slot_cap, cluster.cap_exempt
        self.used: dict[str, int] = {}
        for request in ranked:
            if not request.reschedule:
                held = len(state.held.get(request.id, ()))
                self.used[request.owner] = self.used.get(request.owner, 0) + held

    def _capped(self, request: TopologyRequest) -> bool:
        return self.cap is not None and request.owner not in self.exempt

    def left(self, request: TopologyRequest) -> int:
        """How many slots `request` may use (its num_workers when no cap applies)."""
        if self.cap is None or request.owner in self.exempt:
            return request.max_workers
        return max(0, self.cap - self.used.get(request.owner, 0))

    def use(self, request: TopologyRequest, placement: Mapping[int, Slot]) -> None:
        self.used[request.owner] = self.used.get(request.owner, 0) + len(set(placement.values()))

    def status(self, request: TopologyRequest, placement: Mapping[int, Slot]) -> str | None:
        """The status when the cap, not the free slots, kept `request` below its workers."""
        wanted = min(request.num_workers, len(request.tasks))
        used = len(set(placement.values()))
        if not self._capped(request) or used >= wanted or self.left(request) > 0:
            return None
        if not placement:
            return self.refusal(request, wanted)
        return (
            f"Running on {used} of {wanted} workers: user {request.owner!r} holds "
            f"nimbus.slots.max.per.user ({self.cap}) slots"
        )

    def refusal(self, request: TopologyRequest, wanted: int) -> str:
        return (
            f"Not scheduled: user {request.owner!r} holds {self.used.get(request.owner, 0)} "
            f"of its nimbus.slots.max.per.user ({self.cap}) slots; {wanted} more wanted"
        )


def _evict_for(
    request: TopologyRequest, victims: list[TopologyRequest], state: _Round, failed: Fit
) -> tuple[Fit, _Round, list[TopologyRequest]]:
    """Release victims, lowest-ranked first, until `request` fits; all or nothing."""
    holding = state.holding()
    victims = [
        v for v in victims if v.id in holding
    ]  # evicting one that holds nothing frees nothing
    if not victims:
        return failed, state, []
    everyone = state.copy()  # first, one try with every victim gone: does eviction help at all?
    for victim in victims:
        everyone.release(victim)
    if everyone.fit(request, everyone.candidates(request)).placement is None:
        return failed, state, []
    trial = state.copy()
    evicted: list[TopologyRequest] = []
    for victim in reversed(victims):
        trial.release(victim)
        evicted.append(victim)
        fit = trial.fit(request, trial.candidates(request))
        if fit.placement is not None:
            return fit, trial, evicted
    return failed, state, []


def _slot_status(request: TopologyRequest, placement: Mapping[int, Slot]) -> str:
    wanted = min(request.num_workers, len(request.tasks))
    used = len(set(placement.values()))
    if used >= wanted:
        return FULLY_SCHEDULED
    if not placement:
        return "Not scheduled: no free slot"
    return f"Running on {used} of {wanted} workers: not enough free slots"
