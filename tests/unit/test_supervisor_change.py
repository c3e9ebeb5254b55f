"""A lost supervisor reschedules only the topologies it touches (nimbus/core/supervisor_change.py,
reassign.reassign_touched), and gives the same assignments as a round over every topology
wherever that full round leaves the untouched topologies where they were; a touched topology
that cannot fit falls back to the full round, whose eviction may reach untouched ones; a
supervisor that joins gets the full round at once."""

import random
from dataclasses import replace

from squall.nimbus.core import events as ev
from squall.nimbus.core.decide import handle
from squall.nimbus.core.model import NimbusModel, NimbusSettings, TopologyModel
from squall.nimbus.core.occupancy import build
from squall.nimbus.core.reassign import reassign_round, reassign_touched
from squall.nimbus.core.supervisor_change import narrowed_cluster, touched_topologies
from squall.records import StormBase, SupervisorInfo
from squall.structure import assign_task_ids

SETTINGS = NimbusSettings(
    task_timeout=30, task_launch=60, message_timeout=25, default_workers=2, default_ackers=0
)


def topology(tid, workers, tasks, need=None, priority=None):
    resources = {"a": need} if need else {}
    base = StormBase(tid, "active", 0, workers, {"a": tasks}, component_resources=resources)
    conf = {} if priority is None else {"topology.priority": priority}
    return TopologyModel(tid, base, assign_task_ids(base.component_executors), conf=conf)


def settled(supervisors, topologies):
    """Placed from scratch, then full monitor-style rounds until one writes nothing."""
    model = NimbusModel(SETTINGS, {t.id: t for t in topologies}, supervisors, 1, leading=True)
    model, _ = reassign_round(model, dict.fromkeys(model.topologies, True), {}, 0.0, 0.0)
    for _ in range(5):
        model, out = reassign_round(model, dict.fromkeys(model.topologies, False), {}, 0.0, 0.0)
        if not out:
            return model
    raise AssertionError("full rounds did not settle")


def changed(model, supervisors):
    """(narrowed: what nimbus decides now, full: the round over every topology)."""
    narrowed, _ = handle(model, ev.SupervisorsChanged(1.0, 1.0, supervisors, {}))
    everyone = dict.fromkeys(model.topologies, False)
    full, _ = reassign_round(replace(model, supervisors=supervisors), everyone, {}, 1.0, 1.0)
    return narrowed, full


def placements(model):
    return {tid: dict(t.assignment.task_slots) for tid, t in model.topologies.items()}


def host(ports, memory=4096.0):
    return SupervisorInfo("h", list(range(6700, 6700 + ports)), 0, memory_capacity_mb=memory)


def test_a_lost_supervisor_touches_only_the_topologies_on_it():
    sups = {f"s{i}": host(2) for i in range(4)}
    model = settled(sups, [topology("t1", 2, 4), topology("t2", 2, 4), topology("t3", 1, 2)])
    lost = min(model.topologies["t1"].assignment.node_host)
    after = {sid: info for sid, info in sups.items() if sid != lost}
    on_lost = {tid for tid, t in model.topologies.items() if lost in t.assignment.node_host}
    assert touched_topologies(build(model.topologies), sups, after) == on_lost
    assert "t1" in on_lost and len(on_lost) < 3
    narrowed, full = changed(model, after)
    assert placements(narrowed) == placements(full)
    assert all(lost not in t.assignment.node_host for t in narrowed.topologies.values())


def test_a_supervisor_that_left_with_nothing_on_it_decides_nothing():
    sups = {"s0": host(2), "s1": host(2), "s2": host(1)}
    model = settled(sups, [topology("t1", 2, 4)])
    idle = next(s for s in sups if s not in model.topologies["t1"].assignment.node_host)
    after = {sid: info for sid, info in sups.items() if sid != idle}
    assert touched_topologies(build(model.topologies), sups, after) == set()
    narrowed, out = handle(model, ev.SupervisorsChanged(1.0, 1.0, after, {}))
    assert out == [] and placements(narrowed) == placements(model)
    assert narrowed.supervisors == after


def test_a_joining_or_changed_supervisor_reschedules_every_topology_at_once():
    sups = {"s0": host(3)}
    model = settled(sups, [topology("t1", 2, 2), topology("t2", 3, 3)])
    assert model.topologies["t2"].sched_status.startswith("Running on 1 of 3")
    grown = {**sups, "s1": host(3)}
    assert touched_topologies(build(model.topologies), sups, grown) is None
    narrowed, full = changed(model, grown)
    assert placements(narrowed) == placements(full)
    assert narrowed.topologies["t2"].sched_status == "Fully Scheduled"
    assert set(narrowed.topologies["t1"].assignment.node_host) == {"s0", "s1"}  # spread
    more_ports = {"s0": host(4)}
    assert touched_topologies(build(model.topologies), sups, more_ports) is None
    restarted = {"s0": replace(sups["s0"], start_time_secs=99, version="x")}
    assert touched_topologies(build(model.topologies), sups, restarted) == set()


def test_narrowed_rounds_equal_full_rounds_where_the_full_round_keeps_the_others():
    """Seeded random clusters: whenever the round over every topology leaves each untouched
    topology where it was, the narrowed round gives every topology the same assignment."""
    rng = random.Random(20261123)
    compared = moved = 0
    for _ in range(120):
        sups = {f"s{i}": host(rng.randint(1, 4), rng.choice([1024.0, 4096.0])) for i in range(6)}
        tops = []
        for j in range(rng.randint(2, 6)):
            need = rng.choice([None, None, (256.0, 10.0), (512.0, 50.0)])
            priority = rng.choice([None, 0, 10])
            tops.append(topology(f"t{j}", rng.randint(1, 4), rng.randint(1, 8), need, priority))
        model = settled(sups, tops)
        lost = rng.choice(sorted(sups))
        after = {sid: info for sid, info in sups.items() if sid != lost}
        touched = touched_topologies(build(model.topologies), sups, after)
        narrowed, full = changed(model, after)
        before, now, whole = placements(model), placements(narrowed), placements(full)
        if any(whole[tid] != before[tid] for tid in model.topologies if tid not in touched):
            continue  # the full round moved an untouched topology: the next tick does that
        compared += 1
        moved += now != before
        assert now == whole
        for tid in touched:  # an untouched one keeps its last status text
            assert narrowed.topologies[tid].sched_status == full.topologies[tid].sched_status
    assert compared >= 100 and moved >= 40, (compared, moved)  # checked, not skipped


def test_a_touched_topology_that_cannot_fit_falls_back_to_eviction_over_everyone():
    """A (priority 0) loses its host; the others' hosts each have room for half of it. The
    narrowed round could evict nobody (B and C are untouched), so the full round decides:
    C, the lowest-ranked, is evicted and A takes its place, exactly as a full round does."""
    sups = {name: host(2, 1000.0) for name in ("s1", "s2", "s3")}
    tops = [
        topology("a", 1, 1, (600.0, 10.0), 0),
        topology("b", 1, 1, (600.0, 10.0), 10),
        topology("c", 1, 1, (600.0, 10.0), 10),
    ]
    model = settled(sups, tops)
    lost = next(iter(model.topologies["a"].assignment.node_host))
    after = {sid: info for sid, info in sups.items() if sid != lost}
    assert touched_topologies(build(model.topologies), sups, after) == {"a"}
    alone, _ = reassign_round(replace(model, supervisors=after), {"a": False}, {}, 1.0, 1.0)
    assert alone.topologies["a"].sched_status != "Fully Scheduled"  # alone, it cannot fit
    narrowed, full = changed(model, after)
    assert placements(narrowed) == placements(full)
    assert narrowed.topologies["c"].sched_status.startswith("Evicted to make room for a")
    assert narrowed.topologies["a"].sched_status == "Fully Scheduled"
    assert placements(narrowed)["b"] == placements(model)["b"]


def test_the_free_slots_alone_give_the_same_round_as_every_topology_a_fixed_occupant():
    """Seeded slot-count clusters (squall's default): what nimbus decides for a lost host
    from the occupancy kept between events and the free slots alone (narrowed_cluster) is,
    instruction for instruction, what the round with a request for every topology decides,
    and the same assignments as the full round wherever that keeps the others in place."""
    rng = random.Random(20261124)
    fast = compared = moved = 0
    for _ in range(150):
        sups = {f"s{i}": host(rng.randint(1, 4)) for i in range(rng.randint(3, 8))}
        tops = [
            topology(f"t{j}", rng.randint(1, 4), rng.randint(1, 8), None, rng.choice([None, 0]))
            for j in range(rng.randint(2, 7))
        ]
        model = settled(sups, tops).occupied()
        lost = rng.choice(sorted(sups))
        after = {sid: info for sid, info in sups.items() if sid != lost}
        touched = touched_topologies(model.occupancy, sups, after)
        due = {tid: False for tid in sorted(touched)}
        if not due:
            continue
        rescheduled = {tid: model.topologies[tid] for tid in due}
        cluster = narrowed_cluster(model.occupancy, rescheduled, after, SETTINGS)
        fast += cluster is not None
        gone = replace(model, supervisors=after)
        every = dict.fromkeys(model.topologies, False).copy
        free_model, free_out = reassign_touched(gone, due, every, {}, 1.0, 1.0, cluster)
        all_model, all_out = reassign_touched(gone, due, every, {}, 1.0, 1.0, None)
        assert free_out == all_out  # the same writes and log messages, in order
        assert placements(free_model) == placements(all_model)
        statuses = {
            t: (free_model.topologies[t].sched_status, all_model.topologies[t].sched_status)
            for t in model.topologies
        }
        assert all(a == b for a, b in statuses.values())
        decided, _ = handle(model, ev.SupervisorsChanged(1.0, 1.0, after, {}))
        assert placements(decided) == placements(free_model)
        narrowed, full = changed(model, after)
        before, whole = placements(model), placements(full)
        if any(whole[tid] != before[tid] for tid in model.topologies if tid not in touched):
            continue
        compared += 1
        moved += placements(decided) != before
        assert placements(decided) == whole
    assert fast >= 100 and compared >= 60 and moved >= 40, (fast, compared, moved)


def test_the_free_slots_alone_are_not_used_where_they_would_decide_otherwise():
    """A topology that declares resources anywhere, or a touched topology sharing a slot
    with another one: narrowed_cluster declines, and the round with every request decides."""
    sups = {"s0": host(2), "s1": host(2)}
    model = settled(sups, [topology("t1", 2, 2), topology("t2", 1, 1, (128.0, 10.0))])
    occupancy = build(model.topologies)
    assert occupancy.resource_aware == {"t2"}
    mine = {"t1": model.topologies["t1"]}
    assert narrowed_cluster(occupancy, mine, sups, SETTINGS) is None
    model = settled(sups, [topology("t1", 2, 2), topology("t2", 1, 1)])
    t1, t2 = model.topologies["t1"], model.topologies["t2"]
    slot = next(iter(t1.assignment.task_slots.values()))
    clash = replace(t2.assignment, task_slots={1: slot}, node_host={slot[0]: "h"})
    model = model.with_topology(replace(t2, assignment=clash))
    occupancy = build(model.topologies)
    assert occupancy.shared("t1", t1.assignment)
    assert narrowed_cluster(occupancy, {"t1": t1}, sups, SETTINGS) is None


def test_the_free_slots_are_the_live_ports_no_other_topology_names_in_the_clusters_order():
    sups = {"s1": host(3), "s0": host(2), "s2": host(1)}
    model = settled(sups, [topology("t1", 2, 2), topology("t2", 1, 1)])
    occupancy = build(model.topologies)
    t1 = model.topologies["t1"]
    cluster = narrowed_cluster(occupancy, {"t1": t1}, sups, SETTINGS)
    theirs = {s for s in model.topologies["t2"].assignment.task_slots.values()}
    expected = [(sid, p) for sid in sorted(sups) for p in sups[sid].ports if (sid, p) not in theirs]
    assert cluster.slots() == expected
