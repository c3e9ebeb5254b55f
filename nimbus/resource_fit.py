"""One topology's resource-aware placement: tasks that declare memory and CPU packed onto
slots so that no worker passes topology.worker.max.heap.size.mb and no supervisor passes its
memory or CPU capacity. Pure; the caller passes what every host still has free.

Rules, in order (each tie by interleaved slot order, so the result is deterministic):
1. Live tasks the caller kept (already counted in `free`) stay, on at most k =
   min(topology.workers, slots, tasks) slots (the most loaded ones).
2. Every other task, largest need first (first-fit decreasing packs best), goes to the used
   slot with the fewest tasks among those under ceil(n/k) tasks where it fits; else to a new
   slot (while fewer than k are used) on the host with the fewest of this topology's slots,
   then room for the most such tasks (up to ceil(n/k): a worker opened where the next tasks
   cannot follow wastes one of k), then the most free memory; else to any used slot where
   it fits.
3. If one task fits nowhere, nothing is placed: the caller gets the reason, never a part.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Mapping
from dataclasses import dataclass

from squall.records import Slot

from .scheduler import interleave_slots
from .scheduling_input import TopologyRequest

EPSILON = 1e-9  # sums of fractional MB must not refuse an exact fit


@dataclass(frozen=True)
class Fit:
    placement: dict[int, Slot] | None  # None: it does not fit
    free: dict[str, tuple[float, float]]  # what each host has free afterwards
    reason: str = ""


def place(
    request: TopologyRequest,
    candidates: list[Slot],
    kept: Mapping[int, Slot],
    free: Mapping[str, tuple[float, float]],
) -> Fit:
    """Place `request`'s tasks on `candidates`; `kept` tasks are already counted in `free`."""
    ordered = interleave_slots(candidates)
    order = {slot: i for i, slot in enumerate(ordered)}
    room = {host: list(v) for host, v in free.items()}
    n = len(request.tasks)
    k = min(request.num_workers, len(ordered), n)
    if n == 0:
        return Fit({}, _frozen(room))
    if k == 0:
        return Fit(None, _frozen(room), "Not enough resources to schedule: no free slot")

    total_mem = request.demand()[0]
    if total_mem > k * request.worker_heap_mb + EPSILON:
        return Fit(None, _frozen(room), _workers_too_small(request, k, total_mem))

    load = Counter(kept.values())
    used = sorted(load, key=lambda s: (-load[s], order.get(s, len(order))))[:k]
    placement = {t: s for t, s in kept.items() if s in set(used)}
    for task, slot in kept.items():  # tasks on dropped slots give their resources back
        if task not in placement:
            room[slot[0]][0] += request.need(task)[0]
            room[slot[0]][1] += request.need(task)[1]
            load[slot] -= 1
    heap: dict[Slot, float] = dict.fromkeys(ordered, 0.0)
    for task, slot in placement.items():
        heap[slot] += request.need(task)[0]
    on_host = Counter(s[0] for s in used)
    used_set = set(used)
    spare: dict[str, list[Slot]] = {}  # per host, its unused slots, the first one last
    for slot in reversed(ordered):
        if slot not in used_set:
            spare.setdefault(slot[0], []).append(slot)
    target = -(-n // k)
    movers = sorted(
        (t for t in request.tasks if t not in placement),
        key=lambda t: (-request.need(t)[0], -request.need(t)[1], t),
    )
    for task in movers:
        mem, cpu = request.need(task)
        if mem > request.worker_heap_mb + EPSILON:
            return Fit(None, _frozen(room), _too_big(request, task, mem))

        def fits(slot: Slot, mem: float = mem, cpu: float = cpu) -> bool:
            host = room[slot[0]]
            return (
                heap[slot] + mem <= request.worker_heap_mb + EPSILON
                and host[0] + EPSILON >= mem
                and host[1] + EPSILON >= cpu
            )

        def by_load(s: Slot) -> tuple[int, int]:
            return (load[s], order[s])

        def holds(host: str, mem: float = mem, cpu: float = cpu) -> int:
            """How many tasks like this one a new worker on `host` could take, up to the
            target: a worker opened where the next tasks cannot follow wastes one of k."""
            free_mem, free_cpu = room[host]
            fit = min(
                request.worker_heap_mb / mem if mem > 0 else target,
                free_mem / mem if mem > 0 else target,
                free_cpu / cpu if cpu > 0 else target,
            )
            return min(int(fit + EPSILON), target)

        chosen = min((s for s in used if load[s] < target and fits(s)), key=by_load, default=None)
        if chosen is None and len(used) < k:  # a new slot: one host at a time, not every slot
            host = min(
                (h for h, free_slots in spare.items() if free_slots and fits(free_slots[-1])),
                key=lambda h: (on_host[h], -holds(h), -room[h][0], order[spare[h][-1]]),
                default=None,
            )
            if host is not None:
                chosen = spare[host].pop()
                used.append(chosen)
                used_set.add(chosen)
                on_host[host] += 1
        if chosen is None:
            chosen = min((s for s in used if fits(s)), key=by_load, default=None)
        if chosen is None:
            return Fit(None, _frozen(room), _short(request, candidates, free))
        placement[task] = chosen
        load[chosen] += 1
        heap[chosen] += mem
        room[chosen[0]][0] -= mem
        room[chosen[0]][1] -= cpu
    return Fit(placement, _frozen(room))


def _frozen(room: Mapping[str, list[float]]) -> dict[str, tuple[float, float]]:
    return {host: (v[0], v[1]) for host, v in room.items()}


def _too_big(request: TopologyRequest, task: int, mem: float) -> str:
    return (
        f"Not enough resources to schedule: a task of {request.tasks[task]!r} needs {mem:g} MB, "
        f"more than topology.worker.max.heap.size.mb ({request.worker_heap_mb:g})"
    )


def _workers_too_small(request: TopologyRequest, k: int, mem: float) -> str:
    heap = f"topology.worker.max.heap.size.mb ({request.worker_heap_mb:g})"
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
    request: TopologyRequest, candidates: list[Slot], free: Mapping[str, tuple[float, float]]
) -> str:
    mem, cpu = request.demand()
    hosts = {s[0] for s in candidates}
    free_mem = sum(free[h][0] for h in hosts)
    free_cpu = sum(free[h][1] for h in hosts)
    return (
        f"Not enough resources to schedule: needs {mem:.0f} MB and {cpu:.0f}% CPU in at most "
        f"{request.num_workers} workers of {request.worker_heap_mb:g} MB; "
        f"{free_mem:.0f} MB and {free_cpu:.0f}% CPU free on {len(hosts)} supervisors "
        f"with {len(candidates)} free slots"
    )
