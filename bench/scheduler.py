"""Scheduler speed and moved-task counts.

For 1k/10k/100k tasks on 100/1k/10k slots (10 ports per supervisor), times:
  scratch      assign_scratch over every slot
  timeouts     incremental after 5% of the tasks missed their heartbeats
  lost host    incremental after one supervisor disappeared
  added host   incremental after one supervisor (10 ports) joined
and prints how many tasks each incremental run moved next to a lower bound: for timeouts,
the number of dead tasks (a dead task that lands back on its own slot does not count as
moved); for a lost host, its tasks; for an added host, n minus the most tasks any
slot-balanced placement keeps. That last bound ignores host balance: when a topology has
more slots than tasks, the new host still gets its share of slots (so a returning supervisor
does not sit idle until a manual rebalance), which costs a few moves above it.
Run: .venv/bin/python bench/scheduler.py
"""

from __future__ import annotations

import platform
import random
import time
from collections import Counter

from squall.nimbus.scheduler import assign_scratch, moved_tasks, schedule

PORTS = 10


def slots_for(n_slots: int, first_node: int = 0):
    nodes = n_slots // PORTS
    return [(f"n{first_node + i:05d}", 6700 + p) for i in range(nodes) for p in range(PORTS)]


def timed(fn):
    start = time.perf_counter()
    result = fn()
    return result, time.perf_counter() - start


def best_kept(before, n, k):
    base, extra = divmod(n, k)
    loads = sorted(Counter(before.values()).values(), reverse=True)
    return sum(min(load, base + (i < extra)) for i, load in enumerate(loads))


def run_case(n_tasks: int, n_slots: int, rng: random.Random) -> str:
    tasks = list(range(1, n_tasks + 1))
    slots = slots_for(n_slots)
    before, t_scratch = timed(lambda: assign_scratch(tasks, slots, n_slots))

    dead = set(rng.sample(tasks, n_tasks // 20))
    after, t_dead = timed(lambda: schedule(tasks, slots, n_slots, before, set(tasks) - dead))
    moved_dead = len(moved_tasks(before, after))

    lost = slots[0][0]
    remaining = [s for s in slots if s[0] != lost]
    after, t_lost = timed(lambda: schedule(tasks, remaining, n_slots, before))
    bound_lost = sum(1 for s in before.values() if s[0] == lost)
    moved_lost = len(moved_tasks(before, after))

    grown = slots + slots_for(PORTS, first_node=99_999)
    after, t_add = timed(lambda: schedule(tasks, grown, len(grown), before))
    bound_add = n_tasks - best_kept(before, n_tasks, min(len(grown), n_tasks))
    moved_add = len(moved_tasks(before, after))
    return (
        f"| {n_tasks} | {n_slots} | {t_scratch:.3f} | {t_dead:.3f} | "
        f"{moved_dead}/{len(dead)} | {t_lost:.3f} | {moved_lost}/{bound_lost} | "
        f"{t_add:.3f} | {moved_add}/{bound_add} |"
    )


def main() -> None:
    print(f"# {platform.machine()}, Python {platform.python_version()}")
    print(
        "| tasks | slots | scratch s | timeouts s | moved/dead | lost host s | moved/bound "
        "| added host s | moved/bound |"
    )
    print("|---|---|---|---|---|---|---|---|---|")
    rng = random.Random(7)
    for n_tasks in (1_000, 10_000, 100_000):
        for n_slots in (100, 1_000, 10_000):
            print(run_case(n_tasks, n_slots, rng))


if __name__ == "__main__":
    main()
