"""The occupancy nimbus carries between events (nimbus/core/occupancy.py) is always the one built
from scratch for the topologies it describes, and a stale one is never trusted."""

import random
from dataclasses import replace

from squall.nimbus.core import events as ev
from squall.nimbus.core.decide import handle
from squall.nimbus.core.model import NimbusModel, NimbusSettings, TopologyModel
from squall.nimbus.core.occupancy import build, current
from squall.records import Assignment, StormBase, SupervisorInfo
from squall.structure import assign_task_ids

SETTINGS = NimbusSettings(
    task_timeout=30, task_launch=60, message_timeout=25, default_workers=2, default_ackers=0
)


def topology(tid, workers, tasks, need=None):
    resources = {"a": need} if need else {}
    base = StormBase(tid, "active", 0, workers, {"a": tasks}, component_resources=resources)
    return TopologyModel(tid, base, assign_task_ids(base.component_executors))


def same(carried, topologies):
    fresh = build(topologies)
    assert carried.of is topologies
    assert carried.ports == fresh.ports
    assert carried.used == fresh.used
    assert carried.resource_aware == fresh.resource_aware


def test_the_carried_occupancy_is_the_one_built_afresh_through_seeded_events():
    rng = random.Random(1124)
    for _ in range(40):
        sups = {f"s{i}": SupervisorInfo("h", [6700, 6701, 6702], 0) for i in range(5)}
        model = NimbusModel(SETTINGS, {}, sups, 1, leading=True).occupied()
        for step in range(12):
            kind = rng.choice(["add", "add", "tick", "lose", "drop", "move"])
            if kind == "add":
                need = rng.choice([None, None, (128.0, 10.0)])
                new = topology(f"t{step}", rng.randint(1, 3), rng.randint(1, 6), need)
                model = model.with_topology(new)
            elif kind == "drop" and model.topologies:
                model = model.without(rng.choice(sorted(model.topologies)))
            elif kind == "move" and model.topologies:
                tid = rng.choice(sorted(model.topologies))
                slot = (rng.choice(sorted(model.supervisors)), 6700)
                moved = Assignment(1, tid, {slot[0]: "h"}, {1: slot}, {1: 0})
                model = model.with_topology(replace(model.topologies[tid], assignment=moved))
            elif kind == "lose" and len(model.supervisors) > 1:
                after = dict(model.supervisors)
                after.pop(rng.choice(sorted(after)))
                model, _ = handle(model, ev.SupervisorsChanged(1.0, 1.0, after, {}))
            else:
                model, _ = handle(model, ev.MonitorTick(1.0, 1.0, model.supervisors, {}))
            same(model.occupancy, model.topologies)


def test_a_stale_occupancy_is_rebuilt_not_trusted():
    sups = {"s0": SupervisorInfo("h", [6700], 0)}
    placed = Assignment(1, "t1", {"s0": "h"}, {1: ("s0", 6700)}, {1: 0})
    t1 = replace(topology("t1", 1, 1), assignment=placed)
    model = NimbusModel(SETTINGS, {"t1": t1}, sups, 1, leading=True).occupied()
    assert model.occupancy.on("s0") == {"t1"}
    gone = replace(model, topologies={})  # replaced some other way than with_topology
    assert gone.occupancy.of is not gone.topologies
    assert current(gone.occupancy, gone.topologies).on("s0") == set()
    assert gone.occupied().occupancy.used == {}
    assert model.occupied() is model  # a current one is kept as it is
