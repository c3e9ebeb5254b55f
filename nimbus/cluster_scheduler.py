"""Every topology scheduled from one cluster snapshot (Storm's IScheduler.schedule(topologies,
cluster)): pure, deterministic, and minimal-move per topology. DESIGN.md, "Scheduling".

Order. Topologies are ranked by (beyond its owner's guarantee, topology.priority, id): a
user's topologies, in (priority, id) order, are *within* the guarantee while their memory and
CPU together stay inside the user's resource.aware.scheduler.user.pools entry (a topology that
declares no resources needs none, so it is always within). Lower topology.priority numbers
are more important (Storm: 0 is the highest).

Two passes.
1. Reserve: in rank order, every topology claims the slots of its existing placement on live
   supervisors, and a resource-aware one the memory and CPU of its live tasks there (a task
   that no longer fits its host is dropped and placed again in pass 2). Nothing a topology
   runs is ever taken by another one's new tasks, except by eviction below.
2. Place: in rank order, each topology being rescheduled picks from its own slots and the
   unclaimed ones: by slot count (nimbus/scheduler.py) when it declares no resources, else
   by nimbus/resource_fit.py. Slots it does not use go back to the pool for the next.

Cannot fit. A resource-aware topology whose tasks do not all fit is not placed at all: it
keeps what it had (nothing, if new) and its status says why. Eviction rule: in a round that
reschedules them, it may evict topologies ranked strictly below it on (beyond guarantee,
priority) (so never a peer of the same class and priority), lowest-ranked first, only as
many as it needs, and only if it then fits; otherwise nobody is evicted. An evicted topology
loses every slot this round, its status names the topology it made room for, and it is
placed again, like a new one, as soon as capacity allows.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from squall.records import Slot

from .resource_fit import Fit, place
from .scheduler import schedule
from .scheduling_input import Cluster, Need, Outcome, TopologyRequest

FULLY_SCHEDULED = "Fully Scheduled"


def rank(requests: Sequence[TopologyRequest], pools: Mapping[str, Need]) -> list[TopologyRequest]:
    beyond = beyond_guarantee(requests, pools)
    return sorted(requests, key=lambda r: (r.id in beyond, r.priority, r.id))


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
        self.slots = cluster.slots()
        self.index = {slot: i for i, slot in enumerate(self.slots)}
        self.live = set(self.slots)
        self.owner: dict[Slot, str] = {}
        self.held: dict[str, set[Slot]] = {}
        self.unheld: set[Slot] = set(self.slots)
        self.free: dict[str, tuple[float, float]] = {
            sid: (host.memory_mb, host.cpu) for sid, host in cluster.hosts.items()
        }
        self.kept: dict[str, dict[int, Slot]] = {}

    def _hold(self, slot: Slot, tid: str) -> None:
        self.owner[slot] = tid
        self.held.setdefault(tid, set()).add(slot)
        self.unheld.discard(slot)

    def _drop(self, slot: Slot) -> None:
        self.held[self.owner.pop(slot)].discard(slot)
        self.unheld.add(slot)

    def reserve(self, request: TopologyRequest) -> None:
        owner, live = self.owner, self.live  # no set difference with owner.keys(): that
        # copies every held slot of the cluster, once per topology
        mine = {s for s in set(request.existing.values()) if s in live and s not in owner}
        owner.update(dict.fromkeys(mine, request.id))  # _hold for every slot, in C
        self.held.setdefault(request.id, set()).update(mine)
        self.unheld -= mine
        if not request.resource_aware:  # scheduler.schedule finds its live tasks itself
            self.kept[request.id] = {}
            return
        alive = request.alive
        kept: dict[int, Slot] = {}
        heap: dict[Slot, float] = {}
        for task in sorted(request.existing):
            slot = request.existing[task]
            if task not in request.tasks or self.owner.get(slot) != request.id:
                continue
            if alive is not None and task not in alive:
                continue
            mem, cpu = request.need(task)
            host_mem, host_cpu = self.free[slot[0]]
            worker = heap.get(slot, 0.0) + mem
            fits = mem <= host_mem and cpu <= host_cpu and worker <= request.worker_heap_mb
            if request.reschedule and not fits:
                continue
            self.free[slot[0]] = (host_mem - mem, host_cpu - cpu)
            heap[slot] = worker
            kept[task] = slot
        self.kept[request.id] = kept

    def release(self, request: TopologyRequest) -> None:
        """Give back everything `request` holds (it is evicted)."""
        for slot in list(self.held.get(request.id, ())):
            self._drop(slot)
        if request.resource_aware:
            for task, slot in self.kept.pop(request.id, {}).items():
                mem, cpu = request.need(task)
                host_mem, host_cpu = self.free[slot[0]]
                self.free[slot[0]] = (host_mem + mem, host_cpu + cpu)
        self.kept[request.id] = {}

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
        twin.owner, twin.free = dict(self.owner), dict(self.free)
        twin.held = {tid: set(slots) for tid, slots in self.held.items()}
        twin.unheld = set(self.unheld)
        twin.kept = {tid: dict(k) for tid, k in self.kept.items()}
        return twin


def schedule_all(requests: Sequence[TopologyRequest], cluster: Cluster) -> dict[str, Outcome]:
    """An Outcome for every topology with `reschedule` set (and for every one evicted)."""
    ranked = rank(requests, cluster.user_pools)
    beyond = beyond_guarantee(requests, cluster.user_pools)
    state = _Round(cluster)
    for request in ranked:
        state.reserve(request)
    caps = _SlotCaps(cluster, ranked, state)
    outcomes: dict[str, Outcome] = {}
    for i, request in enumerate(ranked):
        if not request.reschedule or request.id in outcomes:
            continue
        allowed = caps.left(request)
        candidates = _preferred(request, state.candidates(request), allowed)
        if not request.resource_aware:
            placement = schedule(
                request.tasks,
                candidates,
                min(request.num_workers, allowed),
                request.existing,
                request.alive,
            )
            state.claim(request, placement)
            caps.use(request, placement)
            status = caps.status(request, placement) or _slot_status(request, placement)
            outcomes[request.id] = Outcome(placement, status)
            continue
        fit = place(request, candidates, state.kept[request.id], state.free)
        if fit.placement is None and len(candidates) < len(state.candidates(request)):
            fit = place(request, state.candidates(request), state.kept[request.id], state.free)
        if fit.placement is not None and len(set(fit.placement.values())) > allowed:
            status = caps.refusal(request, len(set(fit.placement.values())))
            outcomes[request.id] = Outcome(dict(request.existing), status, placed=False)
            continue
        if fit.placement is None and allowed > 0:
            key = (request.id in beyond, request.priority)
            victims = [
                v
                for v in ranked[i + 1 :]
                if v.reschedule and v.id not in outcomes and (v.id in beyond, v.priority) > key
            ]
            fit, state, evicted = _evict_for(request, victims, state, fit)
            for victim in evicted:
                message = f"Evicted to make room for {request.id} (topology.priority "
                message += f"{request.priority}); waiting for free resources"
                outcomes[victim.id] = Outcome({}, message, placed=False)
        if fit.placement is None:
            outcomes[request.id] = Outcome(dict(request.existing), fit.reason, placed=False)
            continue
        state.free = dict(fit.free)
        state.claim(request, fit.placement)
        caps.use(request, fit.placement)
        outcomes[request.id] = Outcome(fit.placement, FULLY_SCHEDULED)
    return outcomes


def _preferred(request: TopologyRequest, candidates: list[Slot], allowed: int) -> list[Slot]:
    """The candidates less those `request` avoids, when the rest still give it every worker
    it may have; else all of them."""
    if not request.avoid:
        return candidates
    rest = [slot for slot in candidates if not request.avoids(slot)]
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
            return request.num_workers
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
    candidates = everyone.candidates(request)
    if place(request, candidates, everyone.kept[request.id], everyone.free).placement is None:
        return failed, state, []
    trial = state.copy()
    evicted: list[TopologyRequest] = []
    for victim in reversed(victims):
        trial.release(victim)
        evicted.append(victim)
        fit = place(request, trial.candidates(request), trial.kept[request.id], trial.free)
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
