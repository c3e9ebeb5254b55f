"""Nimbus's decisions for setLogConfig and debug (nimbus.log_debug through decide.handle):
the exact instructions, under the leader's epoch, and refusals that change nothing."""

from dataclasses import replace

import pytest

from squall import thrift_api as T
from squall.log_config import REMOVE, UPDATE, Change, LoggerLevel
from squall.nimbus.core import events as ev
from squall.nimbus.core import instructions as ins
from squall.nimbus.core.decide import NotLeader, handle

from .test_nimbus_decide import leader, submitted

WALL = 2000.0


def running():
    model, _ = submitted()
    return model


def test_set_log_config_merges_and_writes_under_the_epoch():
    model = running()
    first = {
        "a": Change(UPDATE, LoggerLevel("DEBUG", 30)),
        "b": Change(UPDATE, LoggerLevel("WARN")),
    }
    model, out = handle(model, ev.SetLogConfig("t", first, WALL))
    merged = {"a": LoggerLevel("DEBUG", 30, 2_030_000), "b": LoggerLevel("WARN")}
    assert out == [ins.WriteLogConfig("t-1", merged, 3)]
    assert model.topologies["t-1"].log_config == merged
    model, out = handle(model, ev.SetLogConfig("t-1", {"a": Change(REMOVE)}, WALL + 1))
    assert out == [ins.WriteLogConfig("t-1", {"b": LoggerLevel("WARN")}, 3)]


def test_set_log_config_refusals_change_nothing():
    model = running()
    with pytest.raises(T.NotAliveException):
        handle(model, ev.SetLogConfig("nope", {}, WALL))
    crowded = {f"l{i}": Change(UPDATE, LoggerLevel("INFO")) for i in range(300)}
    with pytest.raises(T.InvalidTopologyException, match="at most"):
        handle(model, ev.SetLogConfig("t", crowded, WALL))
    with pytest.raises(NotLeader):
        handle(replace(model, leading=False), ev.SetLogConfig("t", {}, WALL))
    assert model.topologies["t-1"].log_config == {}


def test_debug_writes_the_options_into_the_storm_base():
    model = running()
    model, out = handle(model, ev.Debug("t", "", True, 250.0, WALL))
    base = model.topologies["t-1"].base
    assert base.component_debug == {"t-1": 100.0}  # the topology id: the whole topology
    assert out == [ins.WriteBase("t-1", base, 3)]
    model, _ = handle(model, ev.Debug("t", "a", True, 5.0, WALL))
    model, out = handle(model, ev.Debug("t-1", "", False, 0.0, WALL))
    assert model.topologies["t-1"].base.component_debug == {"a": 5.0}
    assert out == [ins.WriteBase("t-1", model.topologies["t-1"].base, 3)]


def test_debug_refusals():
    model = running()
    with pytest.raises(T.NotAliveException):
        handle(model, ev.Debug("nope", "", True, 1.0, WALL))
    with pytest.raises(T.InvalidTopologyException, match="not a component"):
        handle(model, ev.Debug("t", "zzz", True, 1.0, WALL))
    with pytest.raises(T.InvalidTopologyException, match="not a number"):
        handle(model, ev.Debug("t", "", True, float("nan"), WALL))
    with pytest.raises(NotLeader):
        handle(replace(model, leading=False), ev.Debug("t", "", True, 1.0, WALL))


def test_a_new_leader_keeps_the_stored_log_configs():
    model = running()
    base = model.topologies["t-1"].base
    stored = {"t-1": {"a": LoggerLevel("ERROR")}}
    event = ev.BecameLeader(
        epoch=4,
        storm_ids=frozenset({"t-1"}),
        assignment_ids=frozenset(),
        bases={"t-1": base},
        assignments={},
        supervisors=model.supervisors,
        stored_ids=frozenset({"t-1"}),
        stored_confs={},
        log=(),
        now=0.0,
        wall=WALL,
        log_configs=stored,
    )
    model, _ = handle(leader()[0], event)
    assert model.topologies["t-1"].log_config == stored["t-1"]
    model, out = handle(model, ev.SetLogConfig("t", {"b": Change(REMOVE)}, WALL))
    assert out == [ins.WriteLogConfig("t-1", stored["t-1"], 4)]
