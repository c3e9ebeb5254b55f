"""The scheduler's rules, including seed 002's worked example as an exact test."""

from collections import Counter

from hypothesis import given, settings
from hypothesis import strategies as st

from squall.nimbus.scheduler import (
    assign_scratch,
    interleave_slots,
    moved_tasks,
    schedule,
    start_times,
)

SEED_SLOTS = [(n, p) for n in ("node1", "node2") for p in (6001, 6002, 6003)]


def by_slot(placement):
    out = {}
    for task, slot in placement.items():
        out.setdefault(slot, set()).add(task)
    return out


def test_slots_interleave_across_supervisors():
    assert interleave_slots(SEED_SLOTS) == [
        ("node1", 6001),
        ("node2", 6001),
        ("node1", 6002),
        ("node2", 6002),
        ("node1", 6003),
        ("node2", 6003),
    ]


def test_seed_002_scratch_example_exactly():
    placement = assign_scratch(range(1, 11), SEED_SLOTS, num_workers=6)
    assert by_slot(placement) == {
        ("node1", 6001): {1, 7},
        ("node1", 6002): {3, 9},
        ("node1", 6003): {5},
        ("node2", 6001): {2, 8},
        ("node2", 6002): {4, 10},
        ("node2", 6003): {6},
    }


def test_seed_002_incremental_moves_only_the_dead_tasks():
    """Seed 002's second example: tasks 1 and 6 time out. Storm 0.5 moved 1, 4, 7, 10; the
    balanced result that moves the fewest tasks moves only the two dead ones."""
    existing = assign_scratch(range(1, 11), SEED_SLOTS, num_workers=6)
    alive = set(range(1, 11)) - {1, 6}
    after = schedule(range(1, 11), SEED_SLOTS, 6, existing, alive)
    assert moved_tasks(existing, after) <= {1, 6}
    assert sorted(Counter(after.values()).values()) == [1, 1, 2, 2, 2, 2]
    assert {t for t in after if after[t] == existing[t]} >= alive


def test_workers_limit_slots_and_spread_over_hosts():
    placement = assign_scratch(range(1, 9), SEED_SLOTS, num_workers=2)
    assert set(placement.values()) == {("node1", 6001), ("node2", 6001)}


def test_no_slots_means_no_assignment():
    assert schedule([1, 2], [], 4) == {}


def test_start_times_kept_for_tasks_that_stay():
    before = {1: ("a", 1), 2: ("a", 1)}
    after = {1: ("a", 1), 2: ("b", 1), 3: ("b", 1)}
    assert start_times(after, before, {1: 10, 2: 10}, 99) == {1: 10, 2: 99, 3: 99}


# --- properties ------------------------------------------------------------------------

clusters = st.dictionaries(
    st.sampled_from([f"n{i}" for i in range(8)]),
    st.lists(st.integers(6700, 6720), min_size=1, max_size=6, unique=True),
    min_size=1,
    max_size=6,
)


def slots_of(cluster):
    return [(node, port) for node, ports in cluster.items() for port in ports]


def assert_balanced(placement, tasks, slots, num_workers):
    assert set(placement) == set(tasks)
    loads = Counter(placement.values())
    k = min(num_workers, len(slots), len(tasks))
    assert len(loads) == k
    assert max(loads.values()) - min(loads.values()) <= 1
    # hosts use slot counts as even as their port counts allow (water-filling)
    per_host = Counter(node for node, _ in loads)
    caps = Counter(node for node, _ in slots)
    for node, cap in caps.items():
        used = per_host.get(node, 0)
        if used < cap:  # a host with free ports is never below another host's count - 1
            assert all(c <= used + 1 for c in per_host.values())


@settings(max_examples=150, deadline=None)
@given(clusters, st.integers(1, 60), st.integers(1, 40))
def test_scratch_is_balanced_and_deterministic(cluster, n, workers):
    slots = slots_of(cluster)
    tasks = range(1, n + 1)
    placement = assign_scratch(tasks, slots, workers)
    assert_balanced(placement, tasks, slots, workers)
    assert assign_scratch(reversed(tasks), list(reversed(slots)), workers) == placement


@settings(max_examples=150, deadline=None)
@given(clusters, st.integers(1, 60), st.data())
def test_heartbeat_timeouts_move_exactly_the_dead_tasks(cluster, n, data):
    slots = slots_of(cluster)
    tasks = list(range(1, n + 1))
    workers = len(slots)
    before = assign_scratch(tasks, slots, workers)
    dead = data.draw(st.sets(st.sampled_from(tasks)))
    after = schedule(tasks, slots, workers, before, set(tasks) - dead)
    assert_balanced(after, tasks, slots, workers)
    assert moved_tasks(before, after) <= dead


@settings(max_examples=150, deadline=None)
@given(clusters.filter(lambda c: len(c) >= 2), st.integers(1, 60), st.data())
def test_losing_a_supervisor_moves_only_its_tasks(cluster, n, data):
    slots = slots_of(cluster)
    tasks = list(range(1, n + 1))
    workers = data.draw(st.integers(1, len(slots)))
    before = assign_scratch(tasks, slots, workers)
    lost = data.draw(st.sampled_from(sorted(cluster)))
    remaining = [s for s in slots if s[0] != lost]
    after = schedule(tasks, remaining, workers, before)
    assert_balanced(after, tasks, remaining, workers)
    on_lost = {t for t, s in before.items() if s[0] == lost}
    assert moved_tasks(before, after) == on_lost


@settings(max_examples=150, deadline=None)
@given(clusters, st.integers(1, 60), st.lists(st.integers(6700, 6720), min_size=1, unique=True))
def test_adding_a_supervisor_moves_the_lower_bound(cluster, n, new_ports):
    slots = slots_of(cluster)
    tasks = list(range(1, n + 1))
    before = assign_scratch(tasks, slots, len(slots))
    grown = slots + [("new", p) for p in new_ports]
    workers = len(grown)
    after = schedule(tasks, grown, workers, before)
    assert_balanced(after, tasks, grown, workers)
    # Independent bound: with all k slots used, at most sum(min(load, cap)) tasks can stay,
    # maximised by giving the ceil loads to the most loaded old slots.
    k = min(workers, n)
    base, extra = divmod(n, k)
    old_loads = sorted(Counter(before.values()).values(), reverse=True)
    if k == len(grown):
        best_kept = sum(min(load, base + (i < extra)) for i, load in enumerate(old_loads))
        assert len(moved_tasks(before, after)) == n - best_kept
    assert all(after[t] == before[t] or t in moved_tasks(before, after) for t in tasks)
