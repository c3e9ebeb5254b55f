"""Generic resources from conf to the scheduler's input: the DSL's set_generic_resource (Storm's
addResource), topology.component.resources.map read at submit, supervisor.resources.map in
the supervisor's record, and GenericResourceAwareStrategy selected by
topology.scheduler.strategy."""

from __future__ import annotations

import pytest

from squall.nimbus.core.model import NimbusSettings, TopologyModel
from squall.nimbus.scheduling.resource_conf import (
    cluster_of,
    component_resources,
    generic_resources,
    request_of,
)
from squall.records import RecordError, StormBase, SupervisorInfo, decode, encode
from squall.thrift_api import InvalidTopologyException
from squall.topology import Topology
from tests.integration.topologies.tiny import Numbers

SETTINGS = NimbusSettings(1, 1, 1, 1, 1)
GRAS = "org.apache.storm.scheduler.resource.strategies.scheduling.GenericResourceAwareStrategy"


class Gpu(Topology):
    numbers = Numbers.spec(par=2).set_generic_resource("gpu.count", 1)
    plain = Numbers.spec(par=1)


def test_the_dsl_declares_generic_resources_per_component() -> None:
    structure = Gpu.structure()
    assert generic_resources(structure, {}, SETTINGS) == {"numbers": {"gpu.count": 1.0}}
    # declaring a generic resource makes the topology resource-aware: Storm's defaults
    needs = component_resources(structure, {}, SETTINGS)
    assert needs["numbers"] == (128.0, 10.0) and needs["plain"] == (128.0, 10.0)


def test_the_topology_map_is_every_component_default() -> None:
    conf = {"topology.component.resources.map": {"fpga.count": 2}}
    found = generic_resources(Gpu.structure(), conf, SETTINGS)
    assert found == {"numbers": {"gpu.count": 1.0}, "plain": {"fpga.count": 2.0}}


@pytest.mark.parametrize(
    ("value", "words"),
    [
        ({"gpu.count": -1}, "gpu.count"),
        ({"gpu.count": "two"}, "gpu.count"),
        (["gpu.count"], "map of names"),
        ({"onheap.memory.mb": 512}, "topology.component.resources.onheap.memory.mb"),
    ],
)
def test_a_bad_map_is_refused_at_submit(value: object, words: str) -> None:
    conf = {"topology.component.resources.map": value}
    with pytest.raises(InvalidTopologyException, match=words):
        generic_resources(Gpu.structure(), conf, SETTINGS)


def test_the_strategy_and_needs_reach_the_request() -> None:
    base = StormBase(
        "t",
        "active",
        1,
        1,
        {"numbers": 2},
        component_resources={"numbers": (128.0, 10.0)},
        component_generic={"numbers": {"gpu.count": 1.0}},
    )
    topology = TopologyModel("t-1", base, {1: "numbers", 2: "numbers"}, conf={})
    plain = request_of(topology, SETTINGS, True)
    assert plain.generic_need(1) == {"gpu.count": 1.0} and not plain.gras
    conf = {"topology.scheduler.strategy": GRAS}
    component_resources(Gpu.structure(), conf, SETTINGS)  # accepted at submit
    chosen = request_of(TopologyModel("t-1", base, topology.tasks, conf=conf), SETTINGS, True)
    assert chosen.gras and chosen.constraints is None
    assert decode(StormBase, encode(base), "/storms/t-1") == base


def test_the_supervisor_record_carries_its_generic_resources() -> None:
    info = SupervisorInfo("h", [6700], 1, generic_resources={"gpu.count": 2.0})
    assert decode(SupervisorInfo, encode(info), "/supervisors/s") == info
    older = b'{"host": "h", "ports": [6700], "start_time_secs": 1}'
    assert decode(SupervisorInfo, older, "/supervisors/s").generic_resources == {}
    bad = b'{"host": "h", "ports": [6700], "start_time_secs": 1, "generic_resources": {"g": -2}}'
    with pytest.raises(RecordError, match="generic|resource"):
        decode(SupervisorInfo, bad, "/supervisors/s")
    cluster = cluster_of({"s": info}, SETTINGS)
    assert cluster.hosts["s"].generic == {"gpu.count": 2.0}
