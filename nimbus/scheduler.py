"""Task placement: pure functions from a snapshot to an assignment (DESIGN.md, "Scheduling").

The scheduler sees plain data, never ZooKeeper: task ids, free slots, the current placement and
which tasks are alive. Scratch scheduling is incremental scheduling with nothing worth keeping,
so both follow one set of rules:

1. Use k = min(topology.workers, slots, tasks) slots, spread over hosts as evenly as their
   port counts allow; on each host prefer the slots that already hold live tasks.
2. Slot loads are floor(n/k) or ceil(n/k). The ceil loads go first to slots that already hold
   more than floor(n/k) live tasks (each such choice saves one move), then round-robin over
   hosts, counting the ceil loads each host already got, so host loads stay even.
3. A live task stays on its slot while the slot is chosen and under its load; every other task
   (dead, new, on a lost or dropped slot, or in excess) is dealt round-robin, in sorted order,
   over the chosen slots' free room, slots in interleaved order.

Given the chosen slots, rules 2 and 3 keep the largest possible number of tasks in place.
Every tie is broken by sorted ids, so the result never depends on dict or set order.
"""

from __future__ import annotations

from collections import Counter, defaultdict
from collections.abc import Iterable, Mapping

from squall.records import Slot

Placement = dict[int, Slot]


def interleave_slots(slots: Iterable[Slot]) -> list[Slot]:
    """n1:6001, n2:6001, n1:6002, n2:6002, ...: one port of every host per round."""
    by_node: dict[str, list[int]] = defaultdict(list)
    for node, port in set(slots):
        by_node[node].append(port)
    nodes = sorted(by_node)
    for node in nodes:
        by_node[node].sort()
    rounds = max((len(p) for p in by_node.values()), default=0)
    return [
        (node, by_node[node][i]) for i in range(rounds) for node in nodes if i < len(by_node[node])
    ]


def _in_host_round_robin(
    slots: list[Slot], order: Mapping[Slot, int], already: Mapping[str, int] | None = None
) -> list[Slot]:
    """Re-interleave a subset of slots: 1st of each host, then 2nd of each host, ...; a host
    that `already` has some ceil loads joins the rounds that many places later."""
    rank: dict[Slot, int] = {}
    seen: dict[str, int] = defaultdict(int, already or {})
    for slot in sorted(slots, key=order.__getitem__):
        rank[slot] = seen[slot[0]]
        seen[slot[0]] += 1
    return sorted(slots, key=lambda s: (rank[s], order[s]))


def _choose_slots(
    k: int, ordered: list[Slot], kept_on: Mapping[Slot, int], order: Mapping[Slot, int]
) -> list[Slot]:
    """k slots, water-filled over hosts; within a host, the most-loaded slots first."""
    by_node: dict[str, list[Slot]] = defaultdict(list)
    for slot in ordered:
        by_node[slot[0]].append(slot)
    for node_slots in by_node.values():
        node_slots.sort(key=lambda s: (-kept_on.get(s, 0), order[s]))
    # Smallest level L with sum(min(cap, L)) >= k; every host gets min(cap, L-1) slots and
    # the remainder goes to hosts whose L-th slot holds the most live tasks.
    level = 0
    while sum(min(len(s), level) for s in by_node.values()) < k:
        level += 1
    counts = {node: min(len(s), level - 1) for node, s in by_node.items()}
    extra = k - sum(counts.values())
    candidates = sorted(
        (node for node, s in by_node.items() if len(s) >= level),
        key=lambda node: (-kept_on.get(by_node[node][level - 1], 0), node),
    )
    for node in candidates[:extra]:
        counts[node] += 1
    return [slot for node, s in by_node.items() for slot in s[: counts[node]]]


def _capacities(
    chosen: list[Slot], n: int, kept_on: Mapping[Slot, int], order: Mapping[Slot, int]
) -> dict[Slot, int]:
    base, ceil_count = divmod(n, len(chosen))
    full = [s for s in chosen if kept_on.get(s, 0) > base]
    rest = [s for s in chosen if kept_on.get(s, 0) <= base]
    ranked = _in_host_round_robin(full, order)
    given = Counter(node for node, _ in ranked[:ceil_count])
    ranked += _in_host_round_robin(rest, order, given)
    ceil_slots = set(ranked[:ceil_count])
    return {s: base + (1 if s in ceil_slots else 0) for s in chosen}


def schedule(
    tasks: Iterable[int],
    slots: Iterable[Slot],
    num_workers: int,
    existing: Mapping[int, Slot] | None = None,
    alive: Iterable[int] | None = None,
) -> Placement:
    """Place `tasks` on `slots`, keeping live tasks of `existing` where balance allows.

    `alive` defaults to every task of `existing`. With no existing placement (or `alive`
    empty) this is the scratch assignment."""
    task_list = sorted(set(tasks))
    ordered = interleave_slots(slots)
    order = {slot: i for i, slot in enumerate(ordered)}
    k = min(num_workers, len(ordered), len(task_list))
    if k <= 0:
        return {}
    existing = existing or {}
    alive_set = set(existing) if alive is None else set(alive)

    current: dict[Slot, list[int]] = defaultdict(list)
    for task in task_list:
        slot = existing.get(task)
        if slot is not None and task in alive_set and slot in order:
            current[slot].append(task)
    kept_on = {slot: len(ts) for slot, ts in current.items()}

    chosen = _choose_slots(k, ordered, kept_on, order)
    capacity = _capacities(chosen, len(task_list), kept_on, order)

    placement: Placement = {}
    room: dict[Slot, int] = {}
    for slot in chosen:
        keep = current.get(slot, [])[: capacity[slot]]
        for task in keep:
            placement[task] = slot
        room[slot] = capacity[slot] - len(keep)

    # The free room adds up to the number of movers (capacities sum to the task count), so
    # dealing one task per slot with room, round after round, places every mover.
    movers = iter([t for t in task_list if t not in placement])
    cycle = [s for s in sorted(chosen, key=order.__getitem__) if room[s] > 0]
    while cycle:
        for slot in cycle:
            placement[next(movers)] = slot
            room[slot] -= 1
        cycle = [s for s in cycle if room[s] > 0]
    return placement


def assign_scratch(tasks: Iterable[int], slots: Iterable[Slot], num_workers: int) -> Placement:
    """Rebalance: every task counts as alive and every slot as free."""
    return schedule(tasks, slots, num_workers)


def moved_tasks(before: Mapping[int, Slot], after: Mapping[int, Slot]) -> set[int]:
    """Tasks that existed before and run on another slot now."""
    return {t for t, slot in after.items() if t in before and before[t] != slot}


def start_times(
    placement: Mapping[int, Slot],
    previous: Mapping[int, Slot],
    previous_start: Mapping[int, int],
    now_secs: int,
) -> dict[int, int]:
    """Tasks that stayed keep their start time; moved and new tasks start now."""
    return {
        t: previous_start.get(t, now_secs) if previous.get(t) == slot else now_secs
        for t, slot in placement.items()
    }
