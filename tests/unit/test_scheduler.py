"""The scheduler's rules, including seed 002's worked example as an exact test."""

from collections import Counter

from hypothesis import given, settings
from hypothesis import strategies as st

from squall.nimbus.scheduling.schedule_invariants import round_violations
from squall.nimbus.scheduling.scheduler import (
    assign_scratch,
    interleave_slots,
    moved_tasks,
    schedule,
    start_times,
)
from squall.nimbus.scheduling.scheduling_input import Cluster, Host, Outcome, TopologyRequest

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


def test_a_restart_always_changes_its_slots_newest_start():
    """A supervisor restarts a worker when the newest start of its tasks changes: within the
    second of the last start, or after the clock went back, a restart still changes it; a
    slot's own starts count, not another's."""
    slots = {1: ("a", 1), 2: ("a", 1), 3: ("b", 1)}
    starts = {1: 50, 2: 100, 3: 500}
    assert start_times(slots, slots, starts, 100, restarted={1}) == {1: 101, 2: 100, 3: 500}
    assert start_times(slots, slots, starts, 70, restarted={1}) == {1: 101, 2: 100, 3: 500}
    assert start_times(slots, slots, starts, 200, restarted={1}) == {1: 200, 2: 100, 3: 500}


# --- properties ------------------------------------------------------------------------

clusters = st.dictionaries(
    st.sampled_from([f"n{i}" for i in range(8)]),
    st.lists(st.integers(6700, 6720), min_size=1, max_size=6, unique=True),
    min_size=1,
    max_size=6,
)


def slots_of(cluster):
    return [(node, port) for node, ports in cluster.items() for port in ports]


def assert_invariants(placement, tasks, slots):
    """nimbus/scheduling/schedule_invariants.py, as nimbus checks every round: all tasks on live
    slots."""
    ports = {}
    for node, port in slots:
        ports.setdefault(node, []).append(port)
    cluster = Cluster({node: Host(tuple(p)) for node, p in ports.items()})
    request = TopologyRequest("t", dict.fromkeys(tasks, "c"), max(1, len(slots)))
    assert round_violations([request], cluster, {"t": Outcome(placement, "")}) == []


def assert_balanced(placement, tasks, slots, num_workers):
    assert set(placement) == set(tasks)
    assert_invariants(placement, tasks, slots)
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


# --- incremental rules, one example each ------------------------------------------------

TWO_BY_FOUR = [(n, p) for n in ("a", "b") for p in (1, 2, 3, 4)]


def test_rule_1_a_host_keeps_its_loaded_slots_over_its_first_ports():
    existing = {1: ("node1", 6002), 2: ("node1", 6002), 3: ("node2", 6003), 4: ("node2", 6003)}
    assert schedule(range(1, 5), SEED_SLOTS, 2, existing) == existing


def test_rule_1_the_extra_slot_goes_to_the_host_whose_next_slot_holds_live_tasks():
    slots = [("a", 1), ("a", 2), ("b", 1), ("b", 2)]
    existing = {1: ("a", 1), 2: ("b", 1), 3: ("b", 2)}
    assert schedule([1, 2, 3], slots, 3, existing) == existing


def test_rule_2_ceil_loads_round_robin_over_hosts_not_over_the_global_order():
    """Each host keeps two slots (a:3, a:4 and b:1, b:2, one live task each); the two ceil
    loads go one per host, not both to b, whose slots come first in the interleaving."""
    existing = {1: ("a", 3), 2: ("a", 4), 3: ("b", 1), 4: ("b", 2)}
    assert by_slot(schedule(range(1, 7), TWO_BY_FOUR, 4, existing)) == {
        ("a", 3): {1, 6},
        ("a", 4): {2},
        ("b", 1): {3, 5},
        ("b", 2): {4},
    }


def test_rule_3_a_dead_task_gives_its_place_to_a_live_one():
    a, b = ("n1", 1), ("n2", 1)
    after = schedule([1, 2, 3, 4], [a, b], 2, {1: a, 2: a, 3: a, 4: b}, alive={2, 3, 4})
    assert by_slot(after) == {a: {2, 3}, b: {1, 4}}


# --- incremental rules as properties ----------------------------------------------------


@st.composite
def snapshots(draw):
    """A cluster, a workers count and any previous placement: tasks on current slots, on
    slots that are gone, or new; any subset of them alive."""
    cluster = draw(clusters)
    slots = slots_of(cluster)
    gone = [("gone", p) for p in range(6700, 6703)]
    n = draw(st.integers(1, 30))
    tasks = list(range(1, n + 1))
    where = st.one_of(st.none(), st.sampled_from(slots + gone))
    existing = {t: s for t in tasks if (s := draw(where)) is not None}
    alive = draw(st.sets(st.sampled_from(tasks)))
    workers = draw(st.integers(1, len(slots) + 1))
    return tasks, slots, workers, existing, alive


def live_kept_on(tasks, slots, existing, alive):
    """Live tasks per slot of the previous placement that still exists."""
    return Counter(
        existing[t] for t in tasks if t in existing and t in alive and existing[t] in slots
    )


def water_filled(counts, caps):
    """Chosen-slot counts per host as even as the ports allow: a host with a free port is
    never more than one slot behind another host."""
    return all(
        c <= counts[node] + 1 for node in caps if counts[node] < caps[node] for c in counts.values()
    )


@settings(max_examples=300, deadline=None)
@given(snapshots(), st.randoms(use_true_random=False))
def test_incremental_rules(snapshot, rnd):
    tasks, slots, workers, existing, alive = snapshot
    after = schedule(tasks, slots, workers, existing, alive)
    assert_balanced(after, tasks, slots, workers)

    # Dead tasks, tasks on lost slots and new tasks are all alike: only live tasks on live
    # slots are kept, so a dead task's old slot never counts.
    live = {t: s for t, s in existing.items() if t in alive and s in slots}
    assert schedule(tasks, slots, workers, live) == after

    # Independent of input order.
    shuffled = list(existing.items())
    rnd.shuffle(shuffled)
    args = [rnd.sample(tasks, len(tasks)), rnd.sample(slots, len(slots))]
    assert schedule(*args, workers, dict(shuffled), sorted(alive, reverse=True)) == after

    kept = live_kept_on(tasks, slots, existing, alive)
    loads = Counter(after.values())
    chosen = set(loads)
    caps = Counter(node for node, _ in slots)
    counts = Counter({node: 0 for node in caps})
    counts.update(node for node, _ in chosen)

    # Rule 1: no swap of a chosen slot for an unchosen one that keeps the hosts water-filled
    # would keep more live tasks (on one host: the most loaded slots are chosen).
    for c in chosen:
        for u in set(slots) - chosen:
            swapped = Counter(counts)
            swapped[c[0]] -= 1
            swapped[u[0]] += 1
            if water_filled(swapped, caps):
                assert kept[c] >= kept[u], (c, u)

    # Rules 2 and 3: given the chosen slots, the most live tasks possible stay in place.
    base, ceil_count = divmod(len(tasks), len(chosen))
    over = [s for s in chosen if kept[s] > base]
    best = sum(min(kept[s], base) for s in chosen) + min(ceil_count, len(over))
    assert sum(1 for t in after if t in live and after[t] == live[t]) == best

    # Rule 2: after the slots over the floor, the ceil loads go to slots under it (they take
    # moved tasks anyway), and to a slot holding exactly the floor (whose worker would keep
    # its tasks) only once every slot under it has one.
    ceil_slots = {s for s, load in loads.items() if load > base}
    if any(kept[s] == base for s in ceil_slots):
        assert all(s in ceil_slots for s in chosen if kept[s] < base)

    # Rule 2: with no slot over floor(n/k) live tasks and the others all under it or all at
    # it, the ceil loads go to hosts in proportion to their chosen slots (Sainte-Lague): no
    # host with a slot left at the floor had a stronger claim to a ceil load than the weakest
    # claim that got one.
    if not over and len({kept[s] < base for s in chosen}) == 1:
        ceils = Counter(node for (node, port), load in loads.items() if load > base)
        per_host = Counter(node for node, _ in chosen)
        for node in per_host:
            if ceils[node] < per_host[node]:
                claim = (2 * ceils[node] + 1) / per_host[node]
                assert all((2 * ceils[b] - 1) / per_host[b] <= claim for b in ceils)


def test_ceil_loads_kept_for_live_tasks_count_toward_even_host_loads():
    """Both hosts keep three slots; b:1 and b:2 keep two live tasks each, so they take two of
    the four ceil loads. The other two ceil loads go to slots at or under the floor, which
    keeps no extra task wherever they go, so they should even the hosts out (5 and 5)."""
    slots = [(n, p) for n in ("a", "b") for p in (1, 2, 3)]
    existing = {1: ("b", 1), 2: ("b", 1), 3: ("b", 2), 4: ("b", 2)}
    existing |= {5: ("a", 1), 6: ("a", 2), 7: ("a", 3), 8: ("b", 3)}
    after = schedule(range(1, 11), slots, 6, existing)
    assert moved_tasks(existing, after) == set()
    assert Counter(node for node, _ in after.values()) == {"a": 5, "b": 5}


def test_ceil_loads_follow_each_hosts_slot_count_not_its_name():
    """8 tasks on a 1-port host "a" and a 6-port host "b": b's share of the one ceil load is
    6/7, so b gets it, although "a" sorts first (before: a got it by name)."""
    slots = [("a", 1)] + [("b", p) for p in range(1, 7)]
    loads = Counter(assign_scratch(range(1, 9), slots, 7).values())
    assert loads[("a", 1)] == 1 and sum(v for s, v in loads.items() if s[0] == "b") == 7


def test_lopsided_cluster_interleaves_one_port_per_host_per_round():
    """Many one-port hosts beside one large host: the first round takes one port of every
    host, then the large host's ports follow in order (one sort, not rounds x hosts)."""
    slots = [(f"h{i:04d}", 1) for i in range(2000)] + [("big", p) for p in range(1, 20001)]
    ordered = interleave_slots(slots)
    assert ordered[:2001] == sorted([("big", 1)] + [(f"h{i:04d}", 1) for i in range(2000)])
    assert ordered[2001:] == [("big", p) for p in range(2, 20001)]
    placement = assign_scratch(range(1, 44001), slots, 22000)
    assert set(Counter(placement.values()).values()) == {2}
