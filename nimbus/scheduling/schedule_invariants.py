"""What no scheduling outcome may ever do, checked in one place (issue 37 item 1): no
supervisor past its memory or CPU capacity or any generic resource it offers
(supervisor.resources.map), no worker past its topology's
topology.worker.max.heap.size.mb, no slot running two topologies, no topology placed in part.
A resource-aware worker's CPU counts at least storm.worker.min.cpu.pcore.percent (Storm's
Cluster.calculateWorkerResources), as nimbus/scheduling/resource_fit.py charges it.

The property tests run `violations` over whole states; nimbus runs `round_violations` on
every round (nimbus/core/reassign.py) and refuses the round's writes when it finds one, so a
scheduler bug shows as a logged error and a round not taken, never as an over-committed
supervisor. Only live slots (the cluster's) count: tasks on a lost supervisor use nothing.
Pure; one pass over the assignments, and the state before the round is looked at only when
the state after it breaks a rule (then only breaches the round made or worsened count, so a
cluster that was over-committed before, say by a supervisor reporting less memory, does not
block the rounds that repair it).
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Mapping, Sequence

from squall.nimbus.scheduling import generic_resources as gen
from squall.nimbus.scheduling.scheduling_input import (
    DEFAULT_TASK_NEED,
    Cluster,
    Outcome,
    TopologyRequest,
)
from squall.records import Slot

EPSILON = 1e-6  # sums of fractional MB and CPU percent

Breaches = dict[tuple, float | frozenset[str]]


def placements(
    requests: Sequence[TopologyRequest], outcomes: Mapping[str, Outcome]
) -> dict[str, Mapping[int, Slot]]:
    """Every topology's assignment after a round: its outcome's, else what it had."""
    return {r.id: outcomes[r.id].placement if r.id in outcomes else r.existing for r in requests}


class _Slots:
    """Each placement's distinct slots, hashed once per call however often they are asked
    for (a million-task placement costs a tenth of a second per pass)."""

    def __init__(self) -> None:
        self.seen: dict[int, tuple[Mapping[int, Slot], set[Slot]]] = {}

    def of(self, placement: Mapping[int, Slot]) -> set[Slot]:
        hit = self.seen.get(id(placement))
        if hit is None or hit[0] is not placement:
            hit = (placement, set(placement.values()))
            self.seen[id(placement)] = hit
        return hit[1]


def _breaches(
    requests: Sequence[TopologyRequest],
    cluster: Cluster,
    placed: Mapping[str, Mapping[int, Slot]],
    slots: _Slots,
    live: set[Slot],
) -> Breaches:
    out: Breaches = {}
    holder: dict[Slot, str] = {}
    used: dict[str, list[float]] = {}
    generic: gen.GenericFree = {}
    for request in requests:
        placement = placed.get(request.id, {})
        for slot in slots.of(placement) & live:
            other = holder.setdefault(slot, request.id)
            if other != request.id:
                key = ("shared", slot)
                sharing = out.get(key)
                held = sharing if isinstance(sharing, frozenset) else frozenset({other})
                out[key] = held | {request.id}
        if not request.resource_aware:
            continue
        # tasks grouped by (slot, component) in C: a pass in Python per group, not per task
        components = map(request.tasks.get, placement.keys())
        heap: dict[Slot, float] = {}
        worker_cpu: dict[Slot, float] = {}
        for (slot, component), count in Counter(
            zip(placement.values(), components, strict=True)
        ).items():
            if slot not in live or component is None:  # None: old ids of a renumbering
                continue
            mem, cpu = request.needs.get(component, DEFAULT_TASK_NEED)
            charged = used.setdefault(slot[0], [0.0, 0.0])
            charged[0] += mem * count
            heap[slot] = heap.get(slot, 0.0) + mem * count
            worker_cpu[slot] = worker_cpu.get(slot, 0.0) + cpu * count
        for slot, cpu in worker_cpu.items():  # a worker takes at least the floor's CPU
            used[slot[0]][1] += max(cpu, cluster.min_worker_cpu)
        for slot, mem in heap.items():
            if mem > request.worker_heap_mb + EPSILON:
                out[("heap", request.id, slot)] = mem
        if request.generic:
            live_tasks = {t: s for t, s in placement.items() if s in live}
            gen.give_back(generic, gen.charges(request, live_tasks))  # sums usage
    for sid, (mem, cpu) in used.items():
        host = cluster.hosts[sid]
        if mem > host.memory_mb + EPSILON:
            out[("memory", sid)] = mem
        if cpu > host.cpu + EPSILON:
            out[("cpu", sid)] = cpu
    for sid, taken in generic.items():
        offer = cluster.hosts[sid].generic
        for name, amount in taken.items():
            if amount > offer.get(name, 0.0) + EPSILON:
                out[("generic", sid, name)] = amount
    return out


def _describe(key: tuple, value: float | frozenset[str], cluster: Cluster) -> str:
    kind = key[0]
    if kind == "shared":
        return f"slot {key[1]} is assigned to {', '.join(sorted(value))}"  # type: ignore[arg-type]
    if kind == "heap":
        return f"a worker of {key[1]} on {key[2]} holds {value:g} MB, past its heap size"
    capacity = cluster.hosts[key[1]]
    if kind == "generic":
        offer = capacity.generic.get(key[2], 0.0)
        return f"supervisor {key[1]} is given {value:g} {key[2]} of its {offer:g}"
    limit = capacity.memory_mb if kind == "memory" else capacity.cpu
    unit = "MB" if kind == "memory" else "% CPU"
    return f"supervisor {key[1]} is given {value:g} {unit} of its {limit:g}"


def violations(
    requests: Sequence[TopologyRequest], cluster: Cluster, placed: Mapping[str, Mapping[int, Slot]]
) -> list[str]:
    """Every breach of `placed` (topology id -> task -> slot) on `cluster`, as sentences."""
    found = _breaches(requests, cluster, placed, _Slots(), set(cluster.slots()))
    return [_describe(key, value, cluster) for key, value in sorted(found.items(), key=str)]


def _partial(
    request: TopologyRequest, outcome: Outcome, slots: _Slots, live: set[Slot]
) -> str | None:
    if not outcome.placed or not outcome.placement:
        return None
    placement = outcome.placement
    if placement.keys() == request.tasks.keys() and slots.of(placement) <= live:
        return None
    missing = len(request.tasks.keys() - placement.keys())
    off = len(slots.of(placement) - live)
    return (
        f"{request.id} is placed in part: {missing} of its tasks unplaced, "
        f"{off} of its slots not in service"
    )


def round_violations(
    requests: Sequence[TopologyRequest], cluster: Cluster, outcomes: Mapping[str, Outcome]
) -> list[str]:
    """The breaches one scheduler call makes or worsens, as sentences (empty: none). A round
    that changes no placement makes none: it costs one comparison per topology."""
    by_id = {r.id: r for r in requests}
    changed = [tid for tid, o in outcomes.items() if o.placement != by_id[tid].existing]
    if not changed:
        return []
    live, slots = set(cluster.slots()), _Slots()
    partial = [_partial(by_id[tid], outcomes[tid], slots, live) for tid in sorted(changed)]
    out = [p for p in partial if p is not None]
    after = _breaches(requests, cluster, placements(requests, outcomes), slots, live)
    if not after:
        return out
    before = _breaches(requests, cluster, {r.id: r.existing for r in requests}, slots, live)
    for key, value in sorted(after.items(), key=str):
        old = before.get(key)
        if isinstance(value, frozenset):
            worse = old is None or not value <= old  # type: ignore[operator]
        else:
            worse = old is None or value > old + EPSILON  # type: ignore[operator]
        if worse:
            out.append(_describe(key, value, cluster))
    return out
