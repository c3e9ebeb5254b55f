"""A supervisor's offer from its conf, as Storm's SupervisorHeartbeat.mkSupervisorCapacities
reads it: the legacy capacity keys, overridden by supervisor.resources.map entries."""

import pytest

from squall.config import ConfigError
from squall.supervisor.capacity import Capacity, capacity

LEGACY_MEMORY = "supervisor.memory.capacity.mb"
LEGACY = {LEGACY_MEMORY: 4096, "supervisor.cpu.capacity": 400}


def test_the_legacy_keys_without_a_resources_map():
    assert capacity(LEGACY) == Capacity(4096.0, 400.0, {})


@pytest.mark.parametrize(
    "entries",
    [
        {"memory.mb": 8192, "cpu.pcore.percent": 200},
        {LEGACY_MEMORY: 8192, "supervisor.cpu.capacity": 200},
        {"memory.mb": 8192, LEGACY_MEMORY: 8192, "cpu.pcore.percent": 200},
    ],
)
def test_the_resources_map_overrides_the_capacities_and_offers_the_rest(entries):
    conf = {**LEGACY, "supervisor.resources.map": {**entries, "gpu.count": 2}}
    assert capacity(conf) == Capacity(8192.0, 200.0, {"gpu.count": 2.0})


def test_component_memory_names_are_no_offer():
    conf = {**LEGACY, "supervisor.resources.map": {"onheap.memory.mb": 1, "offheap.memory.mb": 2}}
    assert capacity(conf) == Capacity(4096.0, 400.0, {})


def test_one_capacity_named_twice_with_two_amounts_is_refused():
    conf = {**LEGACY, "supervisor.resources.map": {"memory.mb": 8192, LEGACY_MEMORY: 2048}}
    with pytest.raises(ConfigError, match="names one capacity twice .*memory.*keep one"):
        capacity(conf)


def test_a_malformed_resources_map_is_a_config_error():
    with pytest.raises(ConfigError, match="supervisor.resources.map: resource 'gpu.count'"):
        capacity({**LEGACY, "supervisor.resources.map": {"gpu.count": -1}})
