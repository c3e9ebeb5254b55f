"""topology.scheduler.strategy ConstraintSolverStrategy (nimbus/scheduling/constraint_solver.py):
Storm's TestConstraintSolverStrategy ported (both conf formats, the tight 48-executor cluster, kill
and recover, the state limit), a search that finds a placement whenever one exists, and the
strategy key checked at submit."""

from __future__ import annotations

import itertools
from collections import Counter
from dataclasses import replace

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from squall.nimbus.scheduling.cluster_scheduler import FULLY_SCHEDULED, schedule_all
from squall.nimbus.scheduling.constraint_solver import constraints_of
from squall.nimbus.scheduling.schedule_invariants import violations
from squall.nimbus.scheduling.scheduling_input import Cluster, Constraints, Host, TopologyRequest

PAIRS = [
    ["spout-0", "bolt-0"],
    ["bolt-2", "spout-0"],
    ["bolt-1", "bolt-2"],
    ["bolt-1", "bolt-0"],
    ["bolt-1", "spout-0"],
]


def storm_conf(co_location: int, consolidated: bool, max_states: int = 2000) -> dict:
    """TestConstraintSolverStrategy.makeTestTopoConf: the old format (pairs, spread list) or
    the consolidated one (per component: incompatibleComponents, maxNodeCoLocationCnt)."""
    conf: dict = {"topology.ras.constraint.max.state.search": max_states}
    if consolidated:
        rules: dict = {}
        for first, other in PAIRS:
            rules.setdefault(first, {}).setdefault("incompatibleComponents", []).append(other)
        rules.setdefault("spout-0", {})["maxNodeCoLocationCnt"] = str(co_location)
        conf["topology.ras.constraints"] = rules
    else:
        conf["topology.ras.constraints"] = PAIRS
        conf["topology.spread.components"] = ["spout-0"]
    return conf


def storm_topology(conf: dict, bolt_par: int) -> TopologyRequest:
    """makeTopology: one spout of 4 and four bolts of bolt_par, 100 MB and 10% each."""
    tasks: dict[int, str] = {}
    for component, par in [("spout-0", 4)] + [(f"bolt-{i}", bolt_par) for i in range(4)]:
        for _ in range(par):
            tasks[len(tasks) + 1] = component
    components = sorted(set(tasks.values()))
    return TopologyRequest(
        "testTopo",
        tasks,
        1,
        needs=dict.fromkeys(components, (100.0, 10.0)),
        worker_heap_mb=100_000.0,
        priority=1,
        constraints=constraints_of(conf, components),
    )


STORM_CLUSTER = Cluster({f"r000s{i:03d}": Host((0, 1), 1200.0, 120.0) for i in range(4)})


def broken_rules(request: TopologyRequest, placement) -> list[str]:
    """ConstraintSolverStrategy.validateSolution: what `placement` breaks."""
    rules = request.constraints
    assert rules is not None
    out = []
    by_slot: dict = {}
    for task, slot in placement.items():
        by_slot.setdefault(slot, set()).add(request.tasks[task])
    for slot, components in by_slot.items():
        for component in components:
            if rules.incompatible.get(component, frozenset()) & components:
                out.append(f"{component} shares {slot}")
    per_node = Counter((slot[0], request.tasks[t]) for t, slot in placement.items())
    for (host, component), count in per_node.items():
        if count > rules.max_per_node.get(component, count):
            out.append(f"{count} of {component} on {host}")
    return out


def test_the_new_format_is_read_as_storms_config_reads_it():
    """testNewConstraintFormat."""
    raw = {
        "comp-1": {"maxNodeCoLocationCnt": 2, "incompatibleComponents": ["comp-2", "comp-3"]},
        "comp-2": {"incompatibleComponents": ["comp-4"]},
        "comp-3": {"incompatibleComponents": "comp-5"},
    }
    got = constraints_of({"topology.ras.constraints": raw}, [f"comp-{i}" for i in range(1, 6)])
    assert got.incompatible["comp-1"] == {"comp-2", "comp-3"}
    assert got.incompatible["comp-2"] == {"comp-1", "comp-4"}
    assert got.incompatible["comp-3"] == {"comp-1", "comp-5"}
    assert got.max_per_node == {"comp-1": 2}


def test_partial_or_unknown_constraints_are_ignored():
    """testMissingConfig: unknown components and bad entries do not fail (Storm warns)."""
    assert constraints_of({}, []) == Constraints()
    raw = {"comp-1": {"maxNodeCoLocationCnt": "lots", "incompatibleComponents": ["comp-x"]}}
    got = constraints_of({"topology.ras.constraints": raw}, ["comp-1"])
    assert got == Constraints()
    spread = constraints_of({"topology.spread.components": ["a", "nope"]}, ["a"])
    assert spread.max_per_node == {"a": 1}


@pytest.mark.parametrize(
    ("bolt_par", "co_location", "consolidated"),
    [(11, 1, False), (11, 1, True), (11, 2, True), (3, 2, True)],
    ids=["old-format", "new-format", "spread-co-location-2", "backtrack-co-location-2"],
)
def test_constraint_solver_with_kill_and_recover(bolt_par, co_location, consolidated):
    """testConstraintSolver, testConstraintSolverWithSpreadCoLocation and
    ...ForceBacktrackWithSpreadCoLocation (its topology): 48 executors fill 4 x (1200 MB,
    120%) exactly; then every other worker is lost and the topology is placed again."""
    request = storm_topology(storm_conf(co_location, consolidated), bolt_par)
    out = schedule_all([request], STORM_CLUSTER)["testTopo"]
    assert out.status == FULLY_SCHEDULED, out.status
    assert broken_rules(request, out.placement) == []
    assert violations([request], STORM_CLUSTER, {"testTopo": out.placement}) == []
    slots = sorted(set(out.placement.values()))
    dropped = set(slots[::2])
    kept = {t: s for t, s in out.placement.items() if s not in dropped}
    again = schedule_all([replace(request, existing=kept)], STORM_CLUSTER)["testTopo"]
    assert again.status == FULLY_SCHEDULED, again.status
    assert broken_rules(request, again.placement) == []
    assert all(again.placement[t] == s for t, s in kept.items())


def test_too_many_state_transitions_fail():
    """testTooManyStateTransitions: 10 states cannot place 48 executors."""
    request = storm_topology(storm_conf(1, False, max_states=10), 11)
    out = schedule_all([request], STORM_CLUSTER)["testTopo"]
    assert not out.placed and out.placement == {}
    assert "topology.ras.constraint.max.state.search" in out.status


def test_a_placed_topology_is_placed_again_as_it_is():
    """testZeroExecutorScheduling: nothing left to place schedules cleanly."""
    request = storm_topology(storm_conf(1, False), 1)
    first = schedule_all([request], STORM_CLUSTER)["testTopo"]
    again = schedule_all([replace(request, existing=first.placement)], STORM_CLUSTER)
    assert again["testTopo"].placement == first.placement


# --- the search is complete: it finds a placement whenever one exists ---------------------


def exists(request: TopologyRequest, cluster: Cluster) -> bool:
    slots = cluster.slots()
    tasks = sorted(request.tasks)
    for choice in itertools.product(slots, repeat=len(tasks)):
        placement = dict(zip(tasks, choice, strict=True))
        if not broken_rules(request, placement) and not violations(
            [request], cluster, {request.id: placement}
        ):
            return True
    return False


@st.composite
def small_worlds(draw):
    hosts = {
        f"h{i}": Host(
            tuple(range(draw(st.integers(1, 2)))),
            float(draw(st.sampled_from([200, 300, 1000]))),
            400.0,
        )
        for i in range(draw(st.integers(1, 2)))
    }
    components = ["a", "b", "c"]
    tasks = {t: draw(st.sampled_from(components)) for t in range(1, draw(st.integers(1, 5)) + 1)}
    pairs = draw(st.lists(st.sampled_from([["a", "b"], ["a", "c"], ["b", "c"]]), max_size=2))
    spread = draw(st.lists(st.sampled_from(components), max_size=2))
    conf = {"topology.ras.constraints": pairs, "topology.spread.components": spread}
    request = TopologyRequest(
        "t",
        tasks,
        1,
        needs={c: (100.0, 10.0) for c in components},
        worker_heap_mb=float(draw(st.sampled_from([100, 200, 300]))),
        constraints=constraints_of(conf, components),
    )
    return Cluster(hosts), request


@settings(max_examples=150, deadline=None)
@given(small_worlds())
def test_the_solver_places_a_topology_exactly_when_a_placement_exists(world):
    cluster, request = world
    out = schedule_all([request], cluster)["t"]
    assert out.placed == exists(request, cluster), out.status
    if out.placed:
        assert broken_rules(request, out.placement) == []
        assert violations([request], cluster, {"t": out.placement}) == []


# --- the conf -------------------------------------------------------------------------------


def test_the_strategy_is_chosen_by_class_name_and_an_unknown_one_refused_at_submit():
    from squall.nimbus.core.model import NimbusSettings, TopologyModel
    from squall.nimbus.scheduling.resource_conf import component_resources, request_of
    from squall.records import StormBase
    from squall.thrift_api import InvalidTopologyException
    from squall.topology import Topology
    from tests.integration.topologies.tiny import Numbers

    class Plain(Topology):
        numbers = Numbers.spec(par=2)

    settings = NimbusSettings(1, 1, 1, 1, 1)
    package = "org.apache.storm.scheduler.resource.strategies.scheduling."
    for name in (package + "RoundRobinResourceAwareStrategy", "x"):
        with pytest.raises(InvalidTopologyException, match="topology.scheduler.strategy"):
            component_resources(Plain.structure(), {"topology.scheduler.strategy": name}, settings)
    conf = {
        "topology.scheduler.strategy": package + "ConstraintSolverStrategy",
        "topology.spread.components": ["numbers"],
    }
    assert component_resources(Plain.structure(), conf, settings) == {}
    base = StormBase(
        "t", "active", 1, 1, {"numbers": 2}, component_resources={"numbers": (1.0, 1.0)}
    )
    topology = TopologyModel("t-1", base, {1: "numbers", 2: "numbers"}, conf=conf)
    assert request_of(topology, settings, True).constraints == Constraints({}, {"numbers": 1})
    default = {"topology.scheduler.strategy": "DefaultResourceAwareStrategy"}
    assert request_of(replace(topology, conf=default), settings, True).constraints is None
