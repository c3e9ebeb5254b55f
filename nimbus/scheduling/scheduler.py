"""Task placement: pure functions from a snapshot to an assignment (docs/architecture.md,
"Scheduling").

The scheduler sees plain data, never ZooKeeper: task ids, free slots, the current placement and
which tasks are alive. Scratch scheduling is incremental scheduling with nothing worth keeping,
so both follow one set of rules:

1. Use k = min(topology.workers, slots, tasks) slots, spread over hosts as evenly as their
   port counts allow; on each host prefer the slots that already hold live tasks.
2. Slot loads are floor(n/k) or ceil(n/k). The ceil loads go first to slots that already hold
   more than floor(n/k) live tasks (each such choice saves one move), then to slots that hold
   fewer (they take moved tasks anyway), and only then to slots that hold exactly floor(n/k):
   a worker there keeps its task set, so its supervisor does not restart it. When a host is
   lost and free slots can take its workers' tasks, no surviving worker changes (as Storm's
   EvenScheduler, which gives a lost worker's executors to free slots alone); the worker
   re-routes to the moved tasks live (worker/lifecycle.py). Rule 1 may still drop a
   surviving slot to keep hosts of unequal port counts evenly used, a deliberate difference
   from Storm, which keeps every live slot. Within each of the three groups,
   the ceil loads go to hosts in proportion to their chosen slots (Sainte-Lague's divisor
   rule: next to the host with the smallest (ceil loads so far + 1/2) / slots), so a host's
   load follows its slot count rather than its name. With equal hosts and nothing kept (a
   placement from scratch) this is plain round-robin over hosts.
3. A live task stays on its slot while the slot is chosen and under its load; every other task
   (dead, new, on a lost or dropped slot, or in excess) is dealt round-robin, in sorted order,
   over the chosen slots' free room, slots in interleaved order.

Given the chosen slots, rules 2 and 3 keep the largest possible number of tasks in place.
Every tie is broken by sorted ids, so the result never depends on dict or set order.
Every step is a sort or a linear pass: O((tasks + slots) log slots) on any cluster shape.
"""

from __future__ import annotations

import heapq
from collections import Counter, defaultdict
from collections.abc import Collection, Iterable, Mapping
from itertools import compress, filterfalse
from operator import itemgetter

from squall.records import Slot

Placement = dict[int, Slot]


def interleave_slots(slots: Iterable[Slot]) -> list[Slot]:
    """n1:6001, n2:6001, n1:6002, n2:6002, ...: one port of every host per round.

    A host leaves the rounds when its ports run out, so each round costs only the hosts still
    in it: O(S + H log H), also when thousands of one-port hosts sit beside one huge host."""
    by_node: dict[str, list[Slot]] = defaultdict(list)
    for slot in set(slots):  # the slot tuples themselves travel: no new ones are built
        by_node[slot[0]].append(slot)
    port = itemgetter(1)
    for node_slots in by_node.values():
        node_slots.sort(key=port)
    active = sorted(by_node)
    out: list[Slot] = []
    done = 0
    for count in sorted({len(node_slots) for node_slots in by_node.values()}):
        for i in range(done, count):
            out.extend([by_node[node][i] for node in active])
        active = [node for node in active if len(by_node[node]) > count]
        done = count
    return out


def _ceil_picks(
    slots: list[Slot],
    count: int,
    order: Mapping[Slot, int],
    share: Mapping[str, int],
    already: Mapping[str, int] | None = None,
) -> list[Slot]:
    """The `count` slots that get a ceil load first: the next one goes to the host whose
    (ceil loads so far + 1/2) / (its chosen slots) is smallest, so each host gets ceil loads in
    proportion to its slot count (Sainte-Lague's divisor rule); ties by interleaved order. With
    equal hosts this is plain round-robin: 1st of each host, then 2nd of each host, ...

    Only which slots win matters, not their rank among themselves. Within a host the ranks
    grow with its slots' interleaved order, so a heap over hosts (not over slots) yields the
    winners, or the losers when they are fewer: O(S + min(count, S - count) log H) rather than
    ranking all S slots. Ranks with their tie-break are unique, so the winners are exactly
    those of a full sort by (rank, interleaved order)."""
    if count <= 0:
        return []
    if count >= len(slots):
        return list(slots)
    by_node: dict[str, list[Slot]] = defaultdict(list)
    for slot in sorted(slots, key=order.__getitem__):
        by_node[slot[0]].append(slot)
    given = already or {}

    def key(node: str, j: int) -> tuple[float, int, str]:
        return (2 * (given.get(node, 0) + j) + 1) / share[node], order[by_node[node][j]], node

    if count <= len(slots) // 2:  # merge every host's rising ranks; take the first `count`
        heap = [key(node, 0) for node in by_node]
        sign, want = 1, count
    else:  # merge them from the top; leave out the last len - count
        heap = [key(node, len(node_slots) - 1) for node, node_slots in by_node.items()]
        heap = [(-rank, -i, node) for rank, i, node in heap]
        sign, want = -1, len(slots) - count
    heapq.heapify(heap)
    next_j = {node: 0 if sign > 0 else len(node_slots) - 1 for node, node_slots in by_node.items()}
    picked: list[Slot] = []
    while len(picked) < want:
        node = heap[0][2]
        j = next_j[node]
        picked.append(by_node[node][j])
        next_j[node] = j + sign
        if 0 <= j + sign < len(by_node[node]):
            rank, i, _ = key(node, j + sign)
            heapq.heapreplace(heap, (sign * rank, sign * i, node))
        else:
            heapq.heappop(heap)
    if sign > 0:
        return picked
    losers = set(picked)
    return [slot for slot in slots if slot not in losers]


def _water_level(caps: list[int], k: int) -> int:
    """Smallest level L with sum(min(cap, L)) >= k, in O(H log H) (k <= sum(caps))."""
    caps = sorted(caps)
    filled = 0
    for i, cap in enumerate(caps):
        rest = len(caps) - i
        if filled + cap * rest >= k:
            return max(1, -(-(k - filled) // rest))
        filled += cap
    return caps[-1] if caps else 0


def _choose_slots(
    k: int, ordered: list[Slot], kept_on: Mapping[Slot, int], order: Mapping[Slot, int]
) -> list[Slot]:
    """k slots, water-filled over hosts; within a host, the most-loaded slots first."""
    if k == len(ordered):
        return list(ordered)
    by_node: dict[str, list[Slot]] = defaultdict(list)
    for slot in ordered:
        by_node[slot[0]].append(slot)
    for node in {node for node, _ in kept_on}:  # other hosts' slots are in order already
        by_node[node].sort(key=lambda s: (-kept_on.get(s, 0), order[s]))
    # Every host gets min(cap, L-1) slots and the remainder goes to hosts whose L-th slot
    # holds the most live tasks.
    level = _water_level([len(s) for s in by_node.values()], k)
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
    if ceil_count == 0:
        return dict.fromkeys(chosen, base)
    share = Counter(map(itemgetter(0), chosen))
    over = [s for s in chosen if kept_on.get(s, 0) > base]
    under = [s for s in chosen if kept_on.get(s, 0) < base]
    at_floor = [s for s in chosen if kept_on.get(s, 0) == base]
    ranked: list[Slot] = []
    for group in (over, under, at_floor):  # rule 2's order
        given = Counter(node for node, _ in ranked)
        ranked += _ceil_picks(group, ceil_count - len(ranked), order, share, given)
    capacity = dict.fromkeys(chosen, base)
    for slot in ranked:
        capacity[slot] = base + 1
    return capacity


def schedule(
    tasks: Iterable[int] | Mapping[int, str],
    slots: Iterable[Slot],
    num_workers: int,
    existing: Mapping[int, Slot] | None = None,
    alive: Iterable[int] | None = None,
) -> Placement:
    """Place `tasks` on `slots`, keeping live tasks of `existing` where balance allows.

    `alive` defaults to every task of `existing`. With no existing placement (or `alive`
    empty) this is the scratch assignment. O((tasks + slots) log slots)."""
    task_set = tasks.keys() if isinstance(tasks, Mapping) else set(tasks)
    ordered = interleave_slots(slots)
    order = {slot: i for i, slot in enumerate(ordered)}
    k = min(num_workers, len(ordered), len(task_set))
    if k <= 0:
        return {}
    existing = existing or {}
    if alive is None:
        candidates: Iterable[int] = existing.keys()
    else:  # C-level filters, no million-entry intermediate sets
        unique = alive if isinstance(alive, (set, frozenset)) else set(alive)
        candidates = filter(existing.__contains__, unique)
    live = list(filter(task_set.__contains__, candidates))
    live_slots = list(map(existing.__getitem__, live))
    kept_on = Counter(live_slots)
    lost = [s for s in kept_on if s not in order]
    for slot in lost:
        del kept_on[slot]

    chosen = _choose_slots(k, ordered, kept_on, order)
    capacity = _capacities(chosen, len(task_set), kept_on, order)

    # A slot under its load keeps all its live tasks; one over it keeps the lowest ids.
    # Every live task goes in first and the few on lost or overloaded slots come out again:
    # one C-level pass over a million tasks, and deleting keeps the others' insertion order.
    room = dict(capacity)
    whole = {s for s, n in kept_on.items() if n <= room.get(s, 0)}
    placement: Placement = dict(zip(live, live_slots, strict=True))
    cut_tasks: list[tuple[int, Slot]] = []
    if lost or len(whole) < len(kept_on):
        dropped = set(lost).union(s for s in kept_on if s not in whole)
        mask = list(map(dropped.__contains__, live_slots))
        cut_tasks = sorted(zip(compress(live, mask), compress(live_slots, mask), strict=True))
        for task, _ in cut_tasks:
            del placement[task]
    for slot in whole:
        room[slot] -= kept_on[slot]
    for task, slot in cut_tasks:  # a lost slot, or one not chosen, has no room
        if room.get(slot, 0) > 0:
            placement[task] = slot
            room[slot] -= 1

    # The free room adds up to the number of movers (capacities sum to the task count), so
    # dealing one task per slot with room, round after round, places every mover. Rounds in
    # which the same slots have room are dealt in one go (`cycle * rounds`).
    movers = sorted(filterfalse(placement.__contains__, task_set))
    cycle = [s for s in ordered if room.get(s, 0) > 0]  # chosen slots, in interleaved order
    dealt = done = 0
    while cycle:
        rounds = min(room[s] for s in cycle) - done
        placement.update(
            zip(movers[dealt : dealt + rounds * len(cycle)], cycle * rounds, strict=True)
        )
        dealt += rounds * len(cycle)
        done += rounds
        cycle = [s for s in cycle if room[s] > done]
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
    restarted: Collection[int] = (),
) -> dict[int, int]:
    """Tasks that stayed on their slot keep their start time; moved, `restarted` and new
    tasks start now, or a second after the latest start their slot had if that is not
    earlier: a supervisor restarts a worker when the newest start time of its tasks changes
    (supervisor/sync.py), so a restart within the second of the last one, or after the clock
    went back, must still change it. Only the slot's own starts count, so a clock that once
    ran ahead holds back no other slot."""
    latest: dict[Slot, int] = {}
    for t, slot in previous.items():
        latest[slot] = max(latest.get(slot, 0), previous_start.get(t, 0))
    return {
        t: previous_start[t]
        if previous.get(t) == slot and t not in restarted and t in previous_start
        else max(now_secs, latest.get(slot, now_secs - 1) + 1)
        for t, slot in placement.items()
    }
