"""One topology's resource-aware placement: tasks that declare memory and CPU packed onto
slots so that no worker passes topology.worker.max.heap.size.mb and no supervisor passes its
memory or CPU capacity. Pure; the caller passes what every host still has free.

A worker's CPU charge is its tasks' CPU, but at least storm.worker.min.cpu.pcore.percent
(`floor`; Storm's Cluster.calculateWorkerResources): a task joining a worker costs only what
it adds above the floor, so packing also saves CPU.

Two modes. Storm's (the default): topology.workers is ignored and the tasks go into as few
workers as their memory needs. Capped (topology.ras.workers.cap, squall's former rule): at
most k = min(topology.workers, slots, tasks) workers, the tasks spread evenly over them.

Rules, in order (each tie by interleaved slot order, so the result is deterministic):
1. Live tasks the caller kept (already counted in `free`) stay (capped: on the k most
   loaded of their slots).
2. Every other task, largest need first (first-fit decreasing packs best), goes
   - packing: to the fullest used worker where it fits; else to a new worker on the host
     that could hold the most of the tasks still to place in one worker, then has the most
     of this topology's workers, then the most free memory;
   - capped: to the used slot with the fewest tasks among those under ceil(n/k) tasks where
     it fits; else to a new slot (while fewer than k are used) on the host with the fewest
     of this topology's slots, then room for the most such tasks (up to ceil(n/k): a worker
     opened where the next tasks cannot follow wastes one of k), then the most free
     memory; else to any used slot where it fits.
3. If one task fits nowhere, nothing is placed: the caller gets the reason, never a part.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import cast

from squall.nimbus.scheduling import generic_resources as gen
from squall.nimbus.scheduling.scheduler import interleave_slots
from squall.nimbus.scheduling.scheduling_input import (
    DEFAULT_TASK_NEED,
    NO_GENERIC,
    UNBOUNDED,
    TopologyRequest,
)
from squall.records import Slot

Need = Mapping[str, float]  # a task's generic resources
EPSILON = 1e-9  # sums of fractional MB must not refuse an exact fit


@dataclass(frozen=True)
class Fit:
    placement: dict[int, Slot] | None  # None: it does not fit
    free: dict[str, tuple[float, float]]  # what each host has free afterwards
    reason: str = ""
    generic: gen.GenericFree = field(default_factory=dict)  # each host's free generic resources


def cpu_added(worker: float | None, cpu: float, floor: float) -> float:
    """The host CPU a task of `cpu` costs joining a worker whose tasks hold `worker` (None:
    it opens the worker): the worker is charged its tasks' CPU, but at least `floor`."""
    if worker is None:
        return max(cpu, floor)
    return max(worker + cpu, floor) - max(worker, floor)


def charges(
    request: TopologyRequest, placement: Mapping[int, Slot], floor: float
) -> dict[str, list[float]]:
    """host -> [MB, CPU] that `placement`'s workers take (each worker's CPU at least
    `floor`). Tasks are grouped by (slot, component) in C, then summed per group."""
    workers: dict[Slot, list[float]] = {}
    components = map(request.tasks.get, placement.keys())
    pairs = zip(placement.values(), components, strict=True)
    for (slot, component), count in Counter(pairs).items():
        if component is None:
            continue
        mem, cpu = request.needs.get(component, DEFAULT_TASK_NEED)
        worker = workers.setdefault(slot, [0.0, 0.0])
        worker[0] += mem * count
        worker[1] += cpu * count
    out: dict[str, list[float]] = {}
    for slot, (mem, cpu) in workers.items():
        host = out.setdefault(slot[0], [0.0, 0.0])
        host[0] += mem
        host[1] += max(cpu, floor)
    return out


def place(
    request: TopologyRequest,
    candidates: list[Slot],
    kept: Mapping[int, Slot],
    free: Mapping[str, tuple[float, float]],
    floor: float = 0.0,
    generic: Mapping[str, Mapping[str, float]] | None = None,
) -> Fit:
    """Place `request`'s tasks on `candidates`; `kept` tasks are already counted in `free`
    (their workers' CPU at least `floor`, storm.worker.min.cpu.pcore.percent) and in
    `generic` (each host's free generic resources; None: none anywhere)."""
    ordered = interleave_slots(candidates)
    order = {slot: i for i, slot in enumerate(ordered)}
    room = {host: list(v) for host, v in free.items()}
    # copied only where this topology's tasks take some; else read, never written
    generic = generic or {}
    gfree: gen.GenericFree = (
        {host: dict(v) for host, v in generic.items()}
        if request.generic
        else cast(gen.GenericFree, dict(generic))
    )
    no_room: dict[str, float] = {}
    n = len(request.tasks)
    packing = request.max_workers >= UNBOUNDED
    k = min(request.max_workers, len(ordered), n)
    if n == 0:
        return Fit({}, _frozen(room))
    if k == 0:
        return Fit(None, _frozen(room), "Not enough resources to schedule: no free slot")

    total_mem = request.demand()[0]
    if total_mem > k * request.worker_heap_mb + EPSILON:
        return Fit(None, _frozen(room), _workers_too_small(request, k, total_mem))

    load = Counter(kept.values())
    used = sorted(load, key=lambda s: (-load[s], order.get(s, len(order))))[:k]
    used_set = set(used)
    placement = {t: s for t, s in kept.items() if s in used_set}
    if len(placement) < len(kept):  # tasks on dropped slots give their resources back
        dropped = {t: s for t, s in kept.items() if s not in used_set}
        for host, (mem, cpu) in charges(request, dropped, floor).items():
            room[host][0] += mem
            room[host][1] += cpu
        gen.give_back(gfree, gen.charges(request, dropped))
        for slot in set(dropped.values()):
            del load[slot]
    heap: dict[Slot, float] = {}
    worker_cpu: dict[Slot, float] = {}
    for task, slot in placement.items():
        mem, cpu = request.need(task)
        heap[slot] = heap.get(slot, 0.0) + mem
        worker_cpu[slot] = worker_cpu.get(slot, 0.0) + cpu
    on_host = Counter(s[0] for s in used)
    spare: dict[str, list[Slot]] = {}  # per host, its unused slots, the first one last
    for slot in reversed(ordered):
        if slot not in used_set:
            spare.setdefault(slot[0], []).append(slot)
    target = -(-n // k) if not packing else n
    movers = sorted(
        (t for t in request.tasks if t not in placement),
        key=lambda t: (-request.need(t)[0], -request.need(t)[1], t),
    )
    if request.gras:  # GenericResourceAwareStrategy: the scarce resources' tasks first
        movers.sort(key=lambda t: -sum(request.generic_need(t).values()))
    rare = gen.totals(gfree, {s[0] for s in ordered}) if request.gras else {}
    smallest = min((request.need(t)[0] for t in movers), default=0.0)
    limit = request.worker_heap_mb + EPSILON
    open_slots = [s for s in used if heap.get(s, 0.0) + smallest <= limit]
    for left, task in enumerate(movers):
        mem, cpu = request.need(task)
        need = request.generic_need(task) if request.generic else NO_GENERIC
        if mem > request.worker_heap_mb + EPSILON:
            return Fit(None, _frozen(room), _too_big(request, task, mem))

        def fits(slot: Slot, mem: float = mem, cpu: float = cpu, need: Need = need) -> bool:
            host = room[slot[0]]
            return (
                heap.get(slot, 0.0) + mem <= limit
                and host[0] + EPSILON >= mem
                and host[1] + EPSILON >= cpu_added(worker_cpu.get(slot), cpu, floor)
                and (not need or gen.fits(gfree.get(slot[0], no_room), need))
            )

        def by_load(s: Slot) -> tuple[int, int]:
            return (load[s], order[s])

        def holds(
            host: str, mem: float = mem, cpu: float = cpu, rest: int = n, need: Need = need
        ) -> int:
            """How many tasks like this one a new worker on `host` could take, up to the
            target (packing: the tasks still to place)."""
            free_mem, free_cpu = room[host]
            if free_cpu + EPSILON < floor:
                return 0
            fit = min(
                request.worker_heap_mb / mem if mem > 0 else rest,
                free_mem / mem if mem > 0 else rest,
                free_cpu / cpu if cpu > 0 else rest,
            )
            if need:  # and as many as its generic resources allow
                offer = gfree.get(host, no_room)
                for name, amount in need.items():
                    if amount > 0:
                        fit = min(fit, offer.get(name, 0.0) / amount)
            return min(int(fit + EPSILON), rest)

        if packing:
            chosen = min(
                (s for s in open_slots if fits(s)),
                key=lambda s: (-heap.get(s, 0.0), order[s]),
                default=None,
            )
        else:
            chosen = min(
                (s for s in used if load[s] < target and fits(s)), key=by_load, default=None
            )
        if chosen is None and len(used) < k:  # a new slot: one host at a time, not every slot
            rest = len(movers) - left if packing else target

            def new_worker(h: str, rest: int = rest, need: Need = need) -> tuple[float, ...]:
                if packing:
                    key = (-holds(h, rest=rest), -on_host[h], -room[h][0], order[spare[h][-1]])
                else:
                    key = (on_host[h], -holds(h, rest=rest), -room[h][0], order[spare[h][-1]])
                if rare:  # GenericResourceAwareStrategy: Storm's rare-resource affinity first
                    return (gen.rare_penalty(gfree.get(h, no_room), need, rare), *key)
                return key

            opened = min(
                (h for h, free_slots in spare.items() if free_slots and fits(free_slots[-1])),
                key=new_worker,
                default=None,
            )
            if opened is not None:
                chosen = spare[opened].pop()
                used.append(chosen)
                used_set.add(chosen)
                open_slots.append(chosen)
                on_host[opened] += 1
        if chosen is None and not packing:
            chosen = min((s for s in used if fits(s)), key=by_load, default=None)
        if chosen is None:
            return Fit(None, _frozen(room), _short(request, candidates, free, generic))
        placement[task] = chosen
        load[chosen] += 1
        room[chosen[0]][0] -= mem
        room[chosen[0]][1] -= cpu_added(worker_cpu.get(chosen), cpu, floor)
        if need:
            gen.take(gfree.setdefault(chosen[0], {}), need)
        heap[chosen] = heap.get(chosen, 0.0) + mem
        worker_cpu[chosen] = worker_cpu.get(chosen, 0.0) + cpu
        if packing and heap[chosen] + smallest > limit:
            open_slots.remove(chosen)
    return Fit(placement, _frozen(room), generic=gfree)


def _frozen(room: Mapping[str, list[float]]) -> dict[str, tuple[float, float]]:
    return {host: (v[0], v[1]) for host, v in room.items()}


def _too_big(request: TopologyRequest, task: int, mem: float) -> str:
    return (
        f"Not enough resources to schedule: a task of {request.tasks[task]!r} needs {mem:g} MB, "
        f"more than topology.worker.max.heap.size.mb ({request.worker_heap_mb:g})"
    )


def _workers_too_small(request: TopologyRequest, k: int, mem: float) -> str:
    heap = f"topology.worker.max.heap.size.mb ({request.worker_heap_mb:g})"
    if request.max_workers >= UNBOUNDED:
        return (
            f"Not enough resources to schedule: needs {mem:.0f} MB in workers of {heap}, "
            f"more than the {k} free slots hold"
        )
    if k < min(request.num_workers, len(request.tasks)):
        return (
            f"Not enough resources to schedule: needs {mem:.0f} MB in workers of {heap}, "
            f"but only {k} free slots can take its workers"
        )
    return (
        f"Not enough resources to schedule: needs {mem:.0f} MB, more than {k} workers of "
        f"{heap} hold; raise topology.workers or the heap size"
    )


def _short(
    request: TopologyRequest,
    candidates: list[Slot],
    free: Mapping[str, tuple[float, float]],
    generic: Mapping[str, Mapping[str, float]] | None,
) -> str:
    mem, cpu = request.demand()
    hosts = {s[0] for s in candidates}
    free_mem = sum(free[h][0] for h in hosts)
    free_cpu = sum(free[h][1] for h in hosts)
    workers = "" if request.max_workers >= UNBOUNDED else f"at most {request.num_workers} "
    wanted = gen.charges(request, dict.fromkeys(request.tasks, ("", 0))).get("", {})
    extra = free_extra = ""
    if wanted:
        have = gen.totals(generic or {}, hosts)
        extra = ", " + gen.described(wanted)
        free_extra = ", " + gen.described({name: have.get(name, 0.0) for name in wanted})
    return (
        f"Not enough resources to schedule: needs {mem:.0f} MB and {cpu:.0f}% CPU{extra} in "
        f"{workers}workers of {request.worker_heap_mb:g} MB; "
        f"{free_mem:.0f} MB and {free_cpu:.0f}% CPU{free_extra} free on {len(hosts)} "
        f"supervisors with {len(candidates)} free slots"
    )
