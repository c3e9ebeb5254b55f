"""Every topology from one snapshot (nimbus/scheduling/cluster_scheduler.py): slot-count behaviour
kept when nothing declares resources, capacities never exceeded, determinism, no move when nothing
changed, guarantees and the eviction rule."""

from collections import Counter

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from squall.nimbus.scheduling.cluster_scheduler import (
    FULLY_SCHEDULED,
    beyond_guarantee,
    schedule_all,
)
from squall.nimbus.scheduling.resource_fit import EPSILON
from squall.nimbus.scheduling.schedule_invariants import placements, round_violations, violations
from squall.nimbus.scheduling.scheduler import assign_scratch, schedule
from squall.nimbus.scheduling.scheduling_input import Cluster, Host, TopologyRequest

SEED = Cluster({"node1": Host((6001, 6002, 6003)), "node2": Host((6001, 6002, 6003))})


def request(tid, n, workers, mem=None, **kw):
    needs = {"c": (mem, 10.0)} if mem is not None else {}
    return TopologyRequest(tid, {t: "c" for t in range(1, n + 1)}, workers, needs=needs, **kw)


def test_seed_002_through_the_cluster_scheduler_exactly():
    outcome = schedule_all([request("t", 10, 6)], SEED)["t"]
    assert outcome.placement == assign_scratch(range(1, 11), SEED.slots(), 6)
    assert outcome.status == FULLY_SCHEDULED


def test_slot_count_topologies_share_slots_as_one_at_a_time_did():
    """Without resources, the first topology (by id) takes its workers' worth and the next
    one gets the rest; rescheduling both keeps both exactly."""
    first = schedule_all([request("a", 8, 4), request("b", 6, 4)], SEED)
    assert first["a"].placement == schedule(range(1, 9), SEED.slots(), 4)
    taken = set(first["a"].placement.values())
    rest = [s for s in SEED.slots() if s not in taken]
    assert first["b"].placement == schedule(range(1, 7), rest, 4)
    assert first["b"].status == "Running on 2 of 4 workers: not enough free slots"
    again = schedule_all(
        [request(t, n, 4, existing=first[t].placement) for t, n in (("a", 8), ("b", 6))], SEED
    )
    assert {t: o.placement for t, o in again.items()} == {t: o.placement for t, o in first.items()}


def test_a_fixed_topology_keeps_its_slots_and_resources():
    cluster = Cluster({"h": Host((1, 2), memory_mb=1000.0)})
    fixed = request("a", 2, 2, mem=400.0, existing={1: ("h", 1), 2: ("h", 1)}, reschedule=False)
    out = schedule_all([fixed, request("b", 1, 1, mem=300.0)], cluster)
    assert set(out) == {"b"} and not out["b"].placed  # 200 MB left
    assert out["b"].placement == {}
    assert out["b"].status.startswith("Not enough resources to schedule")


def test_a_task_larger_than_a_worker_is_refused_with_the_reason():
    out = schedule_all([request("a", 1, 1, mem=900.0)], SEED)["a"]
    assert not out.placed and "topology.worker.max.heap.size.mb (768)" in out.status


def test_eviction_takes_the_lowest_priority_first_and_only_as_many_as_needed():
    cluster = Cluster({"h": Host((1, 2, 3), memory_mb=1000.0)})
    low = request("low", 1, 1, mem=400.0, priority=20, existing={1: ("h", 1)})
    lower = request("lower", 1, 1, mem=400.0, priority=25, existing={1: ("h", 2)})
    urgent = request("urgent", 1, 1, mem=500.0, priority=0)
    out = schedule_all([low, lower, urgent], cluster)
    assert out["urgent"].placed and out["urgent"].placement == {1: ("h", 2)}
    assert out["lower"].placement == {} and out["lower"].status.startswith("Evicted")
    assert out["low"].placement == {1: ("h", 1)}


def test_no_eviction_of_one_ranked_before_or_when_it_would_not_help():
    """`same` has peer's priority but is younger, so it ranks after (Storm's order)."""
    cluster = Cluster({"h": Host((1, 2), memory_mb=1000.0)})
    peer = request("peer", 1, 1, 800.0, priority=5, existing={1: ("h", 1)}, worker_heap_mb=800.0)
    same = request("same", 1, 1, mem=500.0, priority=5, submitted=10.0)
    out = schedule_all([peer, same], cluster)
    assert out["peer"].placement == {1: ("h", 1)} and not out["same"].placed
    low = request("low", 1, 1, mem=100.0, priority=9, existing={1: ("h", 2)})
    huge = request("huge", 2, 1, mem=600.0, priority=0, worker_heap_mb=2000.0)
    out = schedule_all([peer, low, huge], cluster)
    assert out["low"].placement == {1: ("h", 2)} and not out["huge"].placed


def test_within_guarantee_goes_first_and_may_evict_beyond_guarantee():
    cluster = Cluster({"h": Host((1, 2), memory_mb=1000.0)}, user_pools={"ann": (600.0, 100.0)})
    bob = request("bob-1", 1, 1, 700.0, owner="bob", priority=0, existing={1: ("h", 1)})
    ann = request("ann-1", 1, 1, mem=500.0, owner="ann", priority=29)
    assert beyond_guarantee([bob, ann], cluster.user_pools) == {"bob-1"}
    out = schedule_all([bob, ann], cluster)
    assert out["ann-1"].placed and out["bob-1"].placement == {}


# --- properties ------------------------------------------------------------------------


@st.composite
def worlds(draw):
    hosts = {
        f"h{i}": Host(
            tuple(range(1, draw(st.integers(1, 3)) + 1)),
            float(draw(st.sampled_from([0, 300, 1000, 2000]))),
            float(draw(st.sampled_from([50, 400]))),
        )
        for i in range(draw(st.integers(1, 4)))
    }
    pools = {"ann": (float(draw(st.sampled_from([0, 500, 3000]))), 400.0)}
    requests = []
    for i in range(draw(st.integers(1, 5))):
        n = draw(st.integers(1, 6))
        components = {t: draw(st.sampled_from("xy")) for t in range(1, n + 1)}
        resources = draw(st.booleans())
        needs = {
            c: (float(draw(st.sampled_from([50, 200, 400]))), float(draw(st.sampled_from([5, 30]))))
            for c in "xy"
            if resources
        }
        requests.append(
            TopologyRequest(
                f"t{i}",
                components,
                draw(st.integers(1, 4)),
                owner=draw(st.sampled_from(["ann", "bob"])),
                priority=draw(st.integers(0, 2)),
                needs=needs,
                worker_heap_mb=float(draw(st.sampled_from([400, 800]))),
            )
        )
    return Cluster(hosts, pools), requests


def check_valid(cluster, requests, outcomes):
    assert round_violations(requests, cluster, outcomes) == []
    assert violations(requests, cluster, placements(requests, outcomes)) == []
    by_id = {r.id: r for r in requests}
    owner = {}
    used = {h: [0.0, 0.0] for h in cluster.hosts}
    for tid, outcome in outcomes.items():
        r = by_id[tid]
        if outcome.placed and r.resource_aware:
            assert set(outcome.placement) == set(r.tasks)  # all or nothing
        elif outcome.placed:  # by slot count: every task, or none when no slot is free
            assert set(outcome.placement) in (set(r.tasks), set())
        else:  # keeps what it had, never a part (nothing, if what it had no longer fits)
            assert outcome.placement in (r.existing, {})
        heap = Counter()
        for task, slot in outcome.placement.items():
            assert owner.setdefault(slot, tid) == tid  # a slot runs one topology
            if r.resource_aware:
                mem, cpu = r.need(task)
                used[slot[0]][0] += mem
                used[slot[0]][1] += cpu
                heap[slot] += mem
        assert all(m <= r.worker_heap_mb + EPSILON for m in heap.values())
        assert len(set(outcome.placement.values())) <= r.max_workers
    for h, (mem, cpu) in used.items():
        assert mem <= cluster.hosts[h].memory_mb + EPSILON
        assert cpu <= cluster.hosts[h].cpu + EPSILON


@settings(max_examples=200, deadline=None)
@given(worlds(), st.randoms(use_true_random=False))
def test_capacity_never_exceeded_deterministic_and_no_move_when_nothing_changed(world, rnd):
    cluster, requests = world
    first = schedule_all(requests, cluster)
    check_valid(cluster, requests, first)
    shuffled = rnd.sample(requests, len(requests))
    assert schedule_all(shuffled, cluster) == first
    again_requests = [
        TopologyRequest(**{**r.__dict__, "existing": first[r.id].placement}) for r in requests
    ]
    again = schedule_all(again_requests, cluster)
    check_valid(cluster, again_requests, again)
    for tid, outcome in first.items():
        if outcome.placed:
            assert again[tid].placement == outcome.placement, tid


@settings(max_examples=200, deadline=None)
@given(worlds())
def test_guarantees_honoured(world):
    """Topologies within their owner's guarantee that fit the cluster on their own are
    placed whatever else asks for room."""
    cluster, requests = world
    beyond = beyond_guarantee(requests, cluster.user_pools)
    within = [r for r in requests if r.id not in beyond]
    alone = schedule_all(within, cluster)
    if all(o.placed for o in alone.values()):
        everyone = schedule_all(requests, cluster)
        check_valid(cluster, requests, everyone)
        assert all(everyone[r.id].placed for r in within)


# --- conf to request --------------------------------------------------------------------


def test_the_dsl_declares_resources_per_component():
    from squall.nimbus.core.model import NimbusSettings
    from squall.nimbus.scheduling.resource_conf import component_resources
    from squall.structure import ACKER
    from squall.topology import Topology
    from tests.integration.topologies.tiny import Numbers, Sink

    class Declared(Topology):
        numbers = Numbers.spec(par=2).set_memory_load(256).set_cpu_load(50)
        sink = Sink.spec(inputs=[numbers], par=1)

    class Plain(Topology):
        numbers = Numbers.spec(par=2)

    settings = NimbusSettings(1, 1, 1, 1, 1)
    needs = component_resources(Declared.structure(), {}, settings)
    assert needs == {"numbers": (256.0, 50.0), "sink": (128.0, 10.0), ACKER: (128.0, 10.0)}
    assert component_resources(Plain.structure(), {}, settings) == {}
    topology_wide = component_resources(Plain.structure(), {"topology.priority": 3}, settings)
    assert topology_wide == {}
    with pytest.raises(Exception, match="must be a number of at least 0"):
        conf = {"topology.component.cpu.pcore.percent": "lots"}
        component_resources(Plain.structure(), conf, settings)


def test_supervisor_capacities_decode_strictly_with_storms_defaults():
    from squall.records import RecordError, SupervisorInfo, decode, encode

    old = b'{"host": "h", "ports": [6700], "start_time_secs": 1}'
    assert decode(SupervisorInfo, old, "s").memory_capacity_mb == 4096.0
    info = SupervisorInfo("h", [6700], 1, memory_capacity_mb=512.0, cpu_capacity=50.0)
    assert decode(SupervisorInfo, encode(info), "s") == info
    for bad in ('"lots"', "-1", "true", "NaN"):
        data = b'{"host": "h", "ports": [1], "start_time_secs": 1, "cpu_capacity": %s}' % (
            bad.encode()
        )
        with pytest.raises(RecordError, match="cpu_capacity|finite"):
            decode(SupervisorInfo, data, "s")


def test_a_limited_worker_count_opens_its_worker_where_the_next_tasks_fit():
    """Found by the property test above: two tasks of 50 MB / 30% CPU in one worker. The
    first went to h1 (as much memory as h2, but CPU for one task only), the second then
    fitted nowhere and the topology was refused; a round later it evicted a lower-priority
    topology to land on h2. It is placed on h2 at once, and nothing moves after."""
    cluster = Cluster(
        {
            "h0": Host((1,), 0.0, 50.0),
            "h1": Host((1, 2), 300.0, 50.0),
            "h2": Host((1, 2, 3), 300.0, 400.0),
        },
        {"ann": (0.0, 400.0)},
    )

    def request(tid, tasks, workers, priority, needs):
        return TopologyRequest(
            tid, tasks, workers, owner="ann", priority=priority, needs=needs, worker_heap_mb=400.0
        )

    requests = [
        request("t0", {1: "x", 2: "x"}, 1, 0, {"x": (50.0, 30.0), "y": (50.0, 5.0)}),
        request("t1", {1: "x"}, 1, 1, {}),
        request("t2", {1: "x", 2: "x", 3: "x"}, 3, 0, {}),
        request("t3", {1: "x", 2: "x"}, 2, 0, {}),
    ]
    first = schedule_all(requests, cluster)
    assert set(first["t0"].placement.values()) == {("h2", 1)}
    check_valid(cluster, requests, first)
    again = [TopologyRequest(**{**r.__dict__, "existing": first[r.id].placement}) for r in requests]
    assert schedule_all(again, cluster) == first
