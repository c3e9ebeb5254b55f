"""Storm's scheduling order (nimbus/scheduling/scheduling_priority.py):
DefaultSchedulingPriorityStrategy and FIFOSchedulingPriorityStrategy, and who may evict whom
because of it."""

from __future__ import annotations

import pytest

from squall.nimbus.scheduling.cluster_scheduler import FULLY_SCHEDULED, rank, schedule_all
from squall.nimbus.scheduling.scheduling_input import Cluster, Host, TopologyRequest
from squall.nimbus.scheduling.scheduling_priority import (
    UnknownPriorityStrategy,
    ordered,
    strategy_of,
)


def topo(tid, owner, priority=29, submitted=0.0, mem=100.0, cpu=10.0, **kw):
    needs = {"c": (mem, cpu)} if mem else {}
    return TopologyRequest(
        tid, {1: "c"}, 1, owner=owner, priority=priority, submitted=submitted, needs=needs, **kw
    )


def ids(requests):
    return [r.id for r in requests]


def test_a_users_topologies_go_by_priority_then_age_then_id():
    mine = [
        topo("d", "ann", priority=5, submitted=30.0),
        topo("c", "ann", priority=5, submitted=10.0),
        topo("b", "ann", priority=5, submitted=10.0),
        topo("a", "ann", priority=9, submitted=0.0),
    ]
    assert ids(ordered(mine, {}, (1000.0, 100.0))) == ["b", "c", "d", "a"]


def test_users_take_turns_by_how_far_beyond_their_guarantee_they_would_be():
    """ann's guarantee covers two of her topologies: both come before bob's first; then
    the one whose next topology puts it least beyond (over what is left) goes."""
    requests = [
        topo("ann-1", "ann", mem=400.0),
        topo("ann-2", "ann", mem=400.0),
        topo("ann-3", "ann", mem=400.0),
        topo("bob-1", "bob", priority=0, mem=100.0),
        topo("bob-2", "bob", priority=0, mem=900.0),
    ]
    pools = {"ann": (800.0, 100.0)}
    got = ids(ordered(requests, pools, (4000.0, 400.0)))
    assert got == ["ann-1", "ann-2", "bob-1", "ann-3", "bob-2"]


def test_no_resources_left_keeps_the_last_order():
    """Past the cluster's capacity every score is infinite; ties keep the order of the step
    before (Storm's stable sort), so the user first then drains its queue first."""
    requests = [topo(f"t{i}", u, mem=600.0) for i, u in enumerate("ab" * 2)]
    assert ids(ordered(requests, {}, (500.0, 100.0))) == ["t0", "t2", "t1", "t3"]
    roomy = ids(ordered(requests, {}, (5000.0, 100.0)))
    assert roomy[:2] == ["t0", "t1"]  # with room left, the one further beyond waits


def test_fifo_beyond_the_guarantee_puts_the_oldest_last():
    requests = [
        topo("old", "bob", priority=0, submitted=100.0),
        topo("young", "bob", priority=9, submitted=900.0),
        topo("mid", "eve", submitted=500.0),
        topo("kept", "ann", submitted=1.0),
    ]
    pools = {"ann": (1000.0, 100.0)}
    assert ids(ordered(requests, pools, (4000.0, 400.0), "fifo")) == [
        "kept",
        "young",
        "mid",
        "old",
    ]
    assert ids(ordered(requests, pools, (4000.0, 400.0)))[-1] == "young"  # Default: priority


def test_an_older_peer_may_evict_a_younger_one_as_in_storm():
    """Same user, same priority: Storm's order puts the older first, and a topology may
    evict any topology after it."""
    cluster = Cluster({"h": Host((1, 2), memory_mb=1000.0)})
    young = topo("young", "ann", priority=5, submitted=50.0, mem=600.0, existing={1: ("h", 1)})
    old = topo("old", "ann", priority=5, submitted=10.0, mem=600.0)
    assert ids(rank([young, old], cluster)) == ["old", "young"]
    out = schedule_all([young, old], cluster)
    assert out["old"].status == FULLY_SCHEDULED
    assert out["young"].status.startswith("Evicted to make room for old")


@pytest.mark.parametrize(
    ("name", "expected"),
    [
        (None, "default"),
        (
            "org.apache.storm.scheduler.resource.strategies.priority.DefaultSchedulingPriorityStrategy",
            "default",
        ),
        (
            "org.apache.storm.scheduler.resource.strategies.priority.FIFOSchedulingPriorityStrategy",
            "fifo",
        ),
        ("FIFOSchedulingPriorityStrategy", "fifo"),
    ],
)
def test_storms_class_names_are_accepted(name, expected):
    assert strategy_of(name) == expected


@pytest.mark.parametrize(
    "name",
    [
        "org.apache.storm.scheduler.resource.strategies.priority.GenericResourceAwareSchedulingPriorityStrategy",
        "com.acme.FIFOSchedulingPriorityStrategy",
        "",
    ],
)
def test_other_strategies_are_refused_with_a_typed_error(name):
    with pytest.raises(UnknownPriorityStrategy, match="is not supported; use one of"):
        strategy_of(name)


def test_topologies_that_ask_for_nothing_go_by_priority_across_users():
    """Slot-count topologies (no resources; Storm has none) tie on every score: they go by
    (priority, age, id) across users, not user by user."""
    plain = [
        topo("ann-low", "ann", priority=20, mem=0.0),
        topo("bob-high", "bob", priority=1, mem=0.0),
        topo("ann-high", "ann", priority=2, mem=0.0),
        topo("cy-mid", "cy", priority=5, mem=0.0, submitted=3.0),
    ]
    got = ids(ordered(plain, {}, (1000.0, 100.0)))
    assert got == ["bob-high", "ann-high", "cy-mid", "ann-low"]
    guaranteed = ids(ordered(plain, {"cy": (10.0, 1.0)}, (1000.0, 100.0)))
    assert guaranteed[0] == "cy-mid"  # inside a guarantee: first
