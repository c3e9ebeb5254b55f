"""Load-aware shuffle (Storm 2's LoadAwareShuffleGrouping): near tasks first, wider while
they are loaded above the higher bound, narrower again below the lower bound; within a scope,
targets weighed by load."""

import itertools
from collections import Counter

import pytest

from squall import Bolt, Grouping, Spout, Topology
from squall.structure import assign_task_ids
from squall.worker.locality import (
    CROSSING,
    EVERYTHING,
    HOST_LOCAL,
    MAX_WEIGHT,
    NEAR_LEAST,
    RING,
    ROOM_BELOW,
    SHRINK,
    WORKER_LOCAL,
    LocalityBounds,
    LocalShuffle,
    locality_bounds,
    next_scope,
    next_weights,
    scope_pools,
    weighted_ring,
)
from squall.worker.routing import REFRESH_EVERY, Router

BOUNDS = LocalityBounds(lower=0.2, higher=0.8, refresh_secs=1.0)
POOLS = ((1,), (1, 2), (1, 2, 3, 4))  # task 1 here, 2 on this host, 3 and 4 elsewhere


class S(Spout):
    outputs = ["key", "n"]


class B(Bolt):
    pass


def router(grouping, local, bounds=BOUNDS):
    src = S.spec()
    topo = type("T", (Topology,), {"src": src, "dst": B.spec(inputs={src: grouping}, par=4)})
    structure = topo.structure()
    tasks = assign_task_ids(structure.task_counts())  # dst: 1..4, src: 5
    return Router(structure, tasks, local, bounds)


def loads(**by_task):
    return lambda task: by_task.get(f"t{task}", 0.0)


def test_scopes_hold_the_narrower_ones():
    hosts = {1: "a", 2: "a", 3: "b", 4: "c"}
    assert scope_pools((1, 2, 3, 4), {1}, hosts, "a") == POOLS
    assert scope_pools((3, 4), {1}, hosts, "a") == ((), (), (3, 4))


def test_the_nearest_scope_with_targets_comes_first():
    assert next_scope(WORKER_LOCAL, POOLS, loads(), BOUNDS) == WORKER_LOCAL
    assert next_scope(WORKER_LOCAL, ((), (), (3, 4)), loads(), BOUNDS) == EVERYTHING
    assert next_scope(WORKER_LOCAL, ((), (2,), (2, 3)), loads(), BOUNDS) == HOST_LOCAL


@pytest.mark.parametrize(
    ("scope", "load", "expected"),
    [
        (WORKER_LOCAL, loads(t1=0.81), HOST_LOCAL),  # loaded: one step out
        (WORKER_LOCAL, loads(t1=0.8), WORKER_LOCAL),  # at the bound: stays
        (HOST_LOCAL, loads(t1=0.9, t2=0.9), EVERYTHING),
        (HOST_LOCAL, loads(t1=0.5, t2=0.5), HOST_LOCAL),  # between the bounds: stays
        (HOST_LOCAL, loads(t1=0.1, t2=0.2), WORKER_LOCAL),  # both below: one step in
        (HOST_LOCAL, loads(t1=0.3, t2=0.0), HOST_LOCAL),  # the worker's own task is not
        (EVERYTHING, loads(), HOST_LOCAL),
        (EVERYTHING, loads(t1=1, t2=1, t3=1, t4=1), EVERYTHING),  # nowhere wider
    ],
)
def test_bang_bang_between_the_bounds(scope, load, expected):
    assert next_scope(scope, POOLS, load, BOUNDS) == expected


def test_one_loaded_local_task_among_idle_remote_ones_does_not_flap():
    pools = ((1,), (1,), (1, 2, 3, 4))  # one task here, three on other hosts (load 0 or 1)
    for local in (0.79, 0.5, 0.21):  # wide: the average is under 0.2, the local task is not
        assert next_scope(EVERYTHING, pools, loads(t1=local), BOUNDS) == EVERYTHING
    assert next_scope(EVERYTHING, pools, loads(t1=0.1), BOUNDS) == HOST_LOCAL


def test_no_step_in_to_a_scope_without_targets():
    pools = ((), (2,), (2, 3))
    assert next_scope(HOST_LOCAL, pools, loads(), BOUNDS) == HOST_LOCAL


def test_a_shuffle_goes_round_robin_within_its_scope_and_refreshes_at_most_every_interval():
    shuffle = LocalShuffle(POOLS, BOUNDS)
    assert {shuffle.choose() for _ in range(10)} == {1}
    shuffle.refresh(loads(t1=0.9), now=100.0)
    assert Counter(shuffle.choose() for _ in range(10)) == {1: 5, 2: 5}
    shuffle.refresh(loads(t1=0.9, t2=0.9), now=100.5)  # too soon: not looked at
    assert shuffle.scope == HOST_LOCAL
    shuffle.refresh(loads(t1=0.9, t2=0.9), now=101.0)
    assert Counter(shuffle.choose() for _ in range(8)) == {1: 2, 2: 2, 3: 2, 4: 2}
    shuffle.refresh(loads(), now=102.0)
    shuffle.refresh(loads(), now=103.0)
    assert shuffle.scope == WORKER_LOCAL


def test_conf_keys_as_storms():
    assert locality_bounds({"topology.disable.loadaware.messaging": True}) is None
    bounds = locality_bounds(
        {
            "topology.localityaware.higher.bound": 0.9,
            "topology.localityaware.lower.bound": 0.1,
            "topology.backpressure.check.millis": 20,
        }
    )
    assert bounds == LocalityBounds(lower=0.1, higher=0.9, refresh_secs=0.02)


def test_router_shuffles_to_its_own_worker_until_its_tasks_fill():
    r = router(Grouping.shuffle, local={1, 5})
    r.place({1: "a", 2: "a", 3: "b", 4: "b", 5: "a"}, "a")
    load = {1: 0.0}
    r.load = lambda task: load.get(task, 0.0)

    def picks(n):
        return Counter(t for i in range(n) for t in r.targets("src", 5, "default", ["k", i]))

    assert picks(4 * REFRESH_EVERY) == {1: 4 * REFRESH_EVERY}
    load[1] = 0.95  # task 1's queue nearly full: the next refresh widens to the host
    r.shuffle_of(5, "src", "default", "dst").refreshed = float("-inf")
    assert set(picks(4 * REFRESH_EVERY)) == {1, 2}


def test_router_without_locality_is_round_robin_over_every_task():
    r = router(Grouping.shuffle, local={1, 5}, bounds=None)
    hits = Counter(t for i in range(40) for t in r.targets("src", 5, "default", ["k", i]))
    assert hits == {1: 10, 2: 10, 3: 10, 4: 10}


def test_a_worker_without_the_target_component_shuffles_everywhere():
    r = router(Grouping.shuffle, local={5})
    r.place({1: "b", 2: "b", 3: "c", 4: "c", 5: "a"}, "a")
    hits = Counter(t for i in range(40) for t in r.targets("src", 5, "default", ["k", i]))
    assert hits == {1: 10, 2: 10, 3: 10, 4: 10}


def test_weights_grow_slowly_for_the_least_loaded_and_shrink_fast_for_the_rest():
    first = next_weights({}, (1, 2, 3), loads(t1=0.5, t2=0.04))  # 2 is within 5% of the least
    assert first == {1: MAX_WEIGHT - SHRINK, 2: MAX_WEIGHT, 3: MAX_WEIGHT}
    weights = first
    for _ in range(12):
        weights = next_weights(weights, (1, 2, 3), loads(t1=0.5))
    assert weights == {1: 0, 2: MAX_WEIGHT, 3: MAX_WEIGHT}  # never below 0 nor above the max
    assert next_weights(weights, (1, 2, 3), loads())[1] == 1  # recovered: one step back


def test_a_ring_gives_each_target_its_weights_share_spread_evenly():
    ring = weighted_ring({1: 100, 2: 100}, (1, 2))
    assert ring[:6] == (1, 2, 1, 2, 1, 2) and Counter(ring) == {1: RING // 2, 2: RING // 2}
    quarter = weighted_ring({1: 25, 2: 75}, (1, 2))
    assert Counter(quarter) == {1: 250, 2: 750}
    ones = [i for i, t in enumerate(quarter) if t == 1]
    assert {b - a for a, b in itertools.pairwise(ones)} == {4}  # every fourth, not a block
    assert weighted_ring({1: 0, 2: 0}, (1, 2)) == (1, 2)  # nothing to go by: each once
    assert 3 not in weighted_ring({1: 5, 2: 5, 3: 0}, (1, 2, 3))


def test_a_task_that_falls_behind_gets_fewer_tuples_and_its_share_comes_back_slowly():
    pools = ((1, 2), (1, 2), (1, 2, 3, 4))  # two tasks here
    shuffle = LocalShuffle(pools, BOUNDS)
    now = 100.0

    def refresh(times, load):
        nonlocal now
        for _ in range(times):
            now += BOUNDS.refresh_secs
            shuffle.refresh(load, now)

    def share_of_1():
        return Counter(shuffle.choose() for _ in range(len(shuffle.pool)))[1] / len(shuffle.pool)

    assert share_of_1() == 0.5
    refresh(5, loads(t1=0.5))  # task 1's queue half full, task 2's empty: the scope holds
    assert shuffle.scope == WORKER_LOCAL and shuffle.weights == {1: 50, 2: MAX_WEIGHT}
    assert share_of_1() == pytest.approx(50 / 150, abs=0.01)
    refresh(5, loads())  # caught up: back by 1 a refresh, not all at once
    assert shuffle.weights == {1: 55, 2: MAX_WEIGHT}
    refresh(1, loads(t1=0.9, t2=0.9))  # both full: wider, every weight from the start
    assert shuffle.scope == HOST_LOCAL and shuffle.weights == {1: MAX_WEIGHT, 2: MAX_WEIGHT}
    refresh(1, loads(t1=0.9, t2=0.9))  # the host has no others: wider again
    assert shuffle.scope == EVERYTHING
    assert shuffle.weights == {1: 90, 2: 90, 3: MAX_WEIGHT, 4: MAX_WEIGHT}


def test_local_or_shuffle_weighs_its_workers_tasks_and_never_leaves_them():
    r = router(Grouping.local_or_shuffle, local={1, 2, 5})  # dst 1, 2 here; 3, 4 elsewhere
    r.place({1: "a", 2: "a", 3: "a", 4: "b", 5: "a"}, "a")
    load = {1: 0.95, 2: 0.85}  # both nearly full: a shuffle would widen to the host
    r.load = lambda task: load.get(task, 0.0)

    def picks(n):
        return Counter(t for i in range(n) for t in r.targets("src", 5, "default", ["k", i]))

    assert set(picks(REFRESH_EVERY)) == {1, 2}
    for _ in range(5):  # refreshes: task 1 is the one behind
        r.shuffle_of(5, "src", "default", "dst").refreshed = float("-inf")
        picks(REFRESH_EVERY)
    assert set(picks(1000)) == {1, 2}  # still only this worker's tasks
    weights = r.shuffle_of(5, "src", "default", "dst").weights
    assert weights[1] < weights[2]  # and fewer for the one behind


def test_a_target_in_another_worker_counts_as_more_loaded_by_the_crossing():
    crossed = next_weights({}, (1, 2), loads(t1=1.0, t2=1.0), here=(1,))
    assert crossed == {1: MAX_WEIGHT, 2: MAX_WEIGHT - round(CROSSING / NEAR_LEAST)}
    near = 1.0 - CROSSING  # busy enough that the crossing eats what it has to spare
    assert next_weights({}, (1, 2), loads(t1=1.0, t2=near), here=(1,))[2] == MAX_WEIGHT
    assert next_weights({}, (1, 2), loads(t1=1.0, t2=1.0)) == {1: MAX_WEIGHT, 2: MAX_WEIGHT}


def across(shuffle):
    """The share of one turn of `shuffle`'s ring that goes to task 2, in another worker."""
    return Counter(shuffle.choose() for _ in range(len(shuffle.pool)))[2] / len(shuffle.pool)


def spread(local_load, remote_load, refreshes=30):
    """One spout task's shuffle over a bolt task here (1) and one in another worker on this
    host (2) after `refreshes` at these loads: the share of tuples sent across."""
    shuffle = LocalShuffle(((1,), (1, 2), (1, 2)), BOUNDS)
    for n in range(refreshes):
        shuffle.refresh(loads(t1=local_load, t2=remote_load), now=100.0 + n)
    return across(shuffle)


def test_a_saturated_worker_sends_to_an_idle_one_and_keeps_home_when_both_are_busy():
    """Issue 39: one spout's worker saturated (its queues short: busy share 1) beside a
    worker idling at 0.2 spreads its shuffle; two workers saturated by a spout each keep
    their shuffles at home (each tuple crossing would cost both threads); an idle worker
    (busy share under the lower bound) keeps its own."""
    assert spread(1.0, 0.2) > 0.9  # the idle one gets more until it is as busy
    assert spread(1.0, 1.0) == 0.0
    assert spread(0.1, 0.0) == 0.0  # not loaded: never wider than this worker


def test_a_worker_with_room_is_fed_until_it_is_saturated_not_a_crossing_short_of_it():
    """Issue 39: beside a saturated spout's worker, the other worker's load follows the share
    of tuples it gets (here 1.8 x its share: saturated at 56%). Weighed with the crossing
    at any load it settled a CROSSING short of the sender's (0.9 here), idle for the rest;
    weighed as it is below ROOM_BELOW, within NEAR_LEAST of the sender's (0.95); weighed
    NEAR_LEAST less there, it settles at about ROOM_BELOW, saturated."""
    shuffle = LocalShuffle(((1,), (1, 2), (1, 2)), BOUNDS)
    remote, seen = 0.0, []
    for n in range(400):
        shuffle.refresh(loads(t1=1.0, t2=remote), now=100.0 + n)
        remote = 1.8 * across(shuffle)
        seen.append(remote)
    settled = seen[200:]
    assert min(settled) > ROOM_BELOW - NEAR_LEAST / 2 and max(settled) < ROOM_BELOW + NEAR_LEAST / 2


def test_two_workers_saturated_by_their_own_spouts_keep_home_through_noisy_loads():
    """Each worker's busy share, as its peer reads it, wobbles below 1 (a window with one
    short wait): a remote target's room below ROOM_BELOW must not make two saturated
    workers trade tuples they would both pay for. Their shuffles stay in their own worker."""
    noise = itertools.cycle([0.0, 0.03, 0.01, 0.02, 0.0, 0.03])
    shuffle = LocalShuffle(((1,), (1, 2), (1, 2)), BOUNDS)
    sent_across = 0
    for n in range(300):
        shuffle.refresh(loads(t1=1.0 - next(noise), t2=1.0 - next(noise)), now=100.0 + n)
        sent_across += Counter(shuffle.choose() for _ in range(100))[2]
    assert shuffle.scope == WORKER_LOCAL and sent_across == 0


def test_a_target_loses_weight_by_how_much_more_loaded_it_is_and_the_highest_stays_at_the_max():
    """Not Storm's steps (SHRINK at once): a busy thread's load is near its peers' and the
    least loaded changes from one refresh to the next; Storm's steps took both weights to 0
    and the shares from one extreme to the other."""
    assert next_weights({}, (1, 2), loads(t1=0.2))[1] == MAX_WEIGHT - 4  # 4 NEAR_LEASTs more
    assert next_weights({}, (1, 2), loads(t1=2.0))[1] == MAX_WEIGHT - SHRINK  # at most
    weights = {1: 60, 2: 40}
    for n in range(40):  # the least loaded alternates
        weights = next_weights(weights, (1, 2), loads(t1=0.2 * (n % 2), t2=0.2 * (1 - n % 2)))
    assert max(weights.values()) == MAX_WEIGHT and min(weights.values()) > 0


def test_a_loaded_worker_moves_out_only_to_a_scope_whose_others_are_less_loaded():
    pools = ((1,), (1, 2), (1, 2))
    assert next_scope(WORKER_LOCAL, pools, loads(t1=1.0, t2=0.5), BOUNDS) == HOST_LOCAL
    assert next_scope(WORKER_LOCAL, pools, loads(t1=1.0, t2=1.0), BOUNDS) == WORKER_LOCAL
    assert next_scope(WORKER_LOCAL, pools, loads(t1=1.0, t2=1.0 - CROSSING), BOUNDS) == WORKER_LOCAL
