"""nimbus/core/model.py: what a fresh model means, the names it answers for, and the
occupancy cache that must never make two models differ."""

import pytest

from squall.nimbus.core import occupancy as occ
from squall.nimbus.core.model import NimbusModel, NimbusSettings, TopologyModel, slot_cap
from squall.records import StormBase

SETTINGS = NimbusSettings(
    task_timeout=30, task_launch=60, message_timeout=25, default_workers=2, default_ackers=0
)


def topology(tid: str, name: str) -> TopologyModel:
    return TopologyModel(tid, StormBase(name, "active", 1000, 2, {"a": 2}), {1: "a", 2: "a"})


def test_a_fresh_model_does_not_lead_and_has_no_epoch():
    """A nimbus acts (and fences its writes) only after BecameLeader gives it an epoch."""
    model = NimbusModel(SETTINGS)
    assert model.leading is False and model.epoch == 0


def test_a_name_is_taken_while_a_topology_of_that_name_is_alive():
    model = NimbusModel(SETTINGS).with_topology(topology("wc-1", "wc"))
    assert model.name_taken("wc") is True
    assert model.name_taken("other") is False
    assert model.name_taken("wc-1") is False  # an id is not a name


@pytest.mark.parametrize("value", [1, 5, None])
def test_a_slot_cap_of_one_or_more_or_none_is_kept(value):
    assert slot_cap(value) == value


@pytest.mark.parametrize("value", [0, -1, True, 1.5, "2"])
def test_a_slot_cap_below_one_or_not_a_whole_number_is_refused(value):
    with pytest.raises(ValueError, match="at least 1"):
        slot_cap(value)


def test_the_occupancy_cache_makes_no_difference_to_equality_or_repr():
    """Two models with the same topologies are the same model whether or not the cache of
    used ports was built (the settled-round check compares models); a repr of thousands of
    ports would drown a log line."""
    model = NimbusModel(SETTINGS).with_topology(topology("wc-1", "wc"))
    built = model.occupied()
    assert built.occupancy is not None and isinstance(built.occupancy, occ.Occupancy)
    assert built == model.__class__(**{**vars(model), "occupancy": None})
    assert "occupancy" not in repr(built)
