"""A monitor round whose scheduling input equals that of the last round that changed
nothing skips the scheduler (nimbus/core/reassign.py); any change to that input schedules again."""

from __future__ import annotations

from dataclasses import replace

import pytest

from squall.nimbus.core import events as ev
from squall.nimbus.core import reassign
from squall.nimbus.core.decide import handle
from squall.nimbus.core.model import NimbusModel, TopologyModel
from squall.nimbus.core.reassign import reassign_round
from squall.records import StormBase, SupervisorInfo
from squall.structure import assign_task_ids
from tests.unit.test_nimbus_decide import SETTINGS, TWO_HOSTS, beat, submitted, tick


@pytest.fixture
def calls(monkeypatch):
    """How often the real scheduler runs (it still runs: this only counts)."""
    seen = []
    real = reassign.schedule_all

    def counting(requests, cluster):
        seen.append(len(requests))
        return real(requests, cluster)

    monkeypatch.setattr(reassign, "schedule_all", counting)
    return seen


def beats(seq):
    return {"t-1": {("s1", 6700): beat(seq, 1, 3), ("s2", 6700): beat(seq, 2)}}


def steady(calls):
    model, _ = submitted(conf={"topology.workers": 2})
    model, out = tick(model, 10, beats(1))
    assert out == [] and model.settled is not None
    return model


def test_a_steady_round_after_a_steady_round_skips_the_scheduler(calls):
    model = steady(calls)
    before = len(calls)
    model, out = tick(model, 20, beats(2))
    assert out == [] and len(calls) == before
    # the beats were still folded in: liveness moves on without the scheduler
    assert model.topologies["t-1"].heartbeats.beats[2].changed_at == 20


def test_a_changed_cluster_schedules_again_and_moves_the_lost_tasks(calls):
    model = steady(calls)
    before = len(calls)
    model, out = tick(model, 20, beats(2), supervisors={"s1": TWO_HOSTS["s1"]})
    assert len(calls) == before + 1
    [write, _log] = out
    assert set(write.assignment.task_slots.values()) <= {("s1", 6700), ("s1", 6701)}
    assert model.settled is None  # a round that wrote something is not remembered


def test_a_dead_task_schedules_again_even_with_the_same_input(calls):
    model = steady(calls)
    before = len(calls)
    # task 2's worker stops beating: dead past its launch grace (60) and the timeout (30)
    stale = {"t-1": {("s1", 6700): beat(9, 1, 3), ("s2", 6700): beat(1, 2)}}
    model, out = tick(model, 61, stale)
    assert len(calls) == before + 1
    assert out and out[0].assignment.task_start_secs[2] == 2000  # restarted


def test_a_new_supervisor_is_an_input_change(calls):
    model = steady(calls)
    before = len(calls)
    more = {**TWO_HOSTS, "s3": SupervisorInfo("h3", [6700], 0)}
    model, out = tick(model, 20, beats(2), supervisors=more)
    assert len(calls) == before + 1 and out == []
    model, out = tick(model, 30, beats(3), supervisors=more)
    assert len(calls) == before + 1  # and remembered again


def test_a_supervisor_change_reads_no_beats_and_moves_only_the_lost_tasks(calls):
    """nimbus/controller.py decides a supervisor change with no beats at all: the cache
    from the last round keeps the others alive."""
    model = steady(calls)  # beats seen at 10
    lost = ev.SupervisorsChanged(35.0, 2000.0, {"s1": TWO_HOSTS["s1"]}, {})
    model, out = handle(model, lost)
    [write, log] = out
    assert log.values["moved"] == [2]  # 1 and 3 (beat seen 25 s ago, timeout 30) stay
    assert write.assignment.task_slots[2][0] == "s1"


def test_a_renumbering_that_cannot_fit_keeps_its_tasks_and_settles(calls):
    """A leader finds counts that number the tasks otherwise than /tasks (a grew from 1 to
    2 executors, b's task would be 3, not 2) and three tasks of 600 MB do not fit 1500: the
    topology keeps its assignment and /tasks as they are (written only with an assignment
    that uses the new ids), and later rounds with the same input skip the scheduler instead
    of deciding the same nothing every round."""
    need = {"a": (600.0, 10.0), "b": (600.0, 10.0)}
    base = StormBase("t", "active", 0, 3, {"a": 1, "b": 1}, component_resources=need)
    placed = TopologyModel("t", base, assign_task_ids(base.component_executors))
    host = {"s1": SupervisorInfo("h", [6700, 6701], 0, memory_capacity_mb=1500.0)}
    model = NimbusModel(SETTINGS, {"t": placed}, host, 1, leading=True)
    model, out = reassign_round(model, {"t": True}, {}, 0.0, 0.0)
    assert len(out[0].assignment.task_slots) == 2
    grown = replace(base, component_executors={"a": 2, "b": 1})
    model = model.with_topology(replace(model.topologies["t"], base=grown))
    model, out = reassign_round(model, {"t": False}, {}, 1.0, 1.0)
    assert out == [] and model.topologies["t"].tasks == {1: "a", 2: "b"}
    assert len(model.topologies["t"].assignment.task_slots) == 2
    before = len(calls)
    model, out = reassign_round(model, {"t": False}, {}, 2.0, 2.0)
    assert out == [] and len(calls) == before
    assert model.topologies["t"].tasks == {1: "a", 2: "b"}  # what /tasks still holds
    roomier = {"s1": SupervisorInfo("h", [6700, 6701, 6702], 0, memory_capacity_mb=4096.0)}
    model, out = reassign_round(replace(model, supervisors=roomier), {"t": False}, {}, 3.0, 3.0)
    assert out[0].tasks == {1: "a", 2: "a", 3: "b"} and len(out[0].assignment.task_slots) == 3
