"""The blacklist scheduler's pure function (nimbus/scheduling/blacklist.py): every transition, on
plain data with the clock passed in, and how a monitor round applies it
(nimbus/core/reassign.py)."""

from dataclasses import replace

import pytest

from squall.nimbus.core import events as ev
from squall.nimbus.core import instructions as ins
from squall.nimbus.core.decide import handle
from squall.nimbus.scheduling import blacklist as bl
from squall.nimbus.scheduling.scheduling_input import Cluster, Host
from squall.records import SupervisorInfo

from .test_nimbus_decide import SETTINGS, beat, leader, submitted

SET = bl.BlacklistSettings(tolerance_secs=300, tolerance_count=2, resume_secs=1800)


def failure(at, sid="s1", port=6700, topology="t-1", started=None):
    start = at - 60 if started is None else started
    return bl.Failure(sid, port, topology, start, at, "worker never started")


def test_the_tolerance_count_within_the_window_blacklists_the_supervisor():
    one, changes = bl.observe(bl.Blacklist(), SET, [failure(100)], 100)
    assert not one.listed and not changes
    two, changes = bl.observe(one, SET, [failure(200, port=6701)], 200)
    assert set(two.listed) == {"s1"} and two.excluded_ports("s1") == frozenset()
    assert [(c.supervisor, c.listed) for c in changes] == [("s1", True)]
    assert "2 failed workers within 300s on supervisor s1" in two.reasons()["s1"]
    again, changes = bl.observe(two, SET, [failure(210, port=6702)], 210)
    assert again.listed == two.listed and not changes  # listed once


def test_a_returning_supervisor_needs_a_new_count():
    quick = replace(SET, resume_secs=60)  # back while its failures are still in the window
    listed, _ = bl.observe(bl.Blacklist(), quick, [failure(100), failure(100, port=6701)], 100)
    back, _ = bl.observe(listed, quick, [], 160)
    assert not back.listed
    one, _ = bl.observe(back, quick, [failure(170)], 170)
    assert not one.listed
    two, _ = bl.observe(one, quick, [failure(180, port=6701)], 180)
    assert set(two.listed) == {"s1"}


def test_one_assignment_seen_dead_in_many_rounds_counts_once():
    stuck = failure(100, started=40)
    state = bl.Blacklist()
    for now in (100, 110, 120):
        state, _ = bl.observe(state, SET, [replace(stuck, at=now)], now)
    assert not state.listed and len(state.failures) == 1


def test_a_failure_past_the_window_no_longer_counts():
    one, _ = bl.observe(bl.Blacklist(), SET, [failure(100)], 100)
    later, changes = bl.observe(one, SET, [failure(401)], 401)
    assert not later.listed and not changes
    assert [f.at for f in later.failures] == [401]


def test_the_supervisor_returns_after_the_resume_time():
    listed, _ = bl.observe(bl.Blacklist(), SET, [failure(100), failure(100, port=6701)], 100)
    assert listed.listed["s1"].until == 1900
    still, changes = bl.observe(listed, SET, [], 1899)
    assert set(still.listed) == {"s1"} and not changes
    back, changes = bl.observe(still, SET, [], 1900)
    assert not back.listed
    assert [(c.supervisor, c.listed, c.reason) for c in changes] == [
        ("s1", False, "resume time passed")
    ]


def test_per_slot_mode_blacklists_only_the_failing_slot():
    per_slot = replace(SET, whole_supervisor=False)
    state, _ = bl.observe(bl.Blacklist(), per_slot, [failure(100), failure(100, port=6701)], 100)
    assert not state.listed  # one failure on each slot
    state, _ = bl.observe(state, per_slot, [failure(200)], 200)
    assert state.excluded_ports("s1") == frozenset({6700})
    cluster = bl.in_service(Cluster({"s1": Host((6700, 6701)), "s2": Host((6700,))}), state)
    assert cluster.slots() == [("s1", 6701), ("s2", 6700)]


def test_a_topology_failing_on_two_supervisors_blames_neither():
    state, _ = bl.observe(bl.Blacklist(), SET, [failure(100), failure(100, port=6701)], 100)
    assert set(state.listed) == {"s1"}
    state, changes = bl.observe(state, SET, [failure(200, sid="s2")], 200)
    assert not state.listed  # its failures were the topology's
    assert [(c.supervisor, c.listed) for c in changes] == [("s1", False)]
    state, _ = bl.observe(state, SET, [failure(300, sid="s2", port=6701)], 300)
    assert not state.listed


def test_off_clears_the_blacklist():
    listed, _ = bl.observe(bl.Blacklist(), SET, [failure(1), failure(1, port=2)], 1)
    off, changes = bl.observe(listed, replace(SET, enabled=False), [failure(2, port=3)], 2)
    assert off == bl.Blacklist() and [c.listed for c in changes] == [False]


def test_a_shortage_releases_the_earliest_blacklisted_first():
    state = bl.Blacklist(
        listed={"a": bl.Listed(5, 99, "r"), "b": bl.Listed(1, 99, "r"), "c": bl.Listed(9, 99, "r")}
    )
    kept, changes = bl.release_for_shortage(state, 1, {"": 1, "a": 2, "b": 2, "c": 2})
    assert kept == state and not changes
    kept, changes = bl.release_for_shortage(state, 4, {"": 1, "a": 2, "b": 2, "c": 2})
    assert set(kept.listed) == {"c"} and [c.supervisor for c in changes] == ["b", "a"]


def test_settings_come_from_storms_keys_and_bad_values_are_refused():
    conf = {
        "blacklist.scheduler.tolerance.time.secs": 60,
        "blacklist.scheduler.tolerance.count": 1,
        "blacklist.scheduler.resume.time.secs": 90,
        "blacklist.scheduler.assume.supervisor.bad.based.on.bad.slot": False,
        "blacklist.scheduler.strategy": "none",
    }
    assert bl.BlacklistSettings.from_conf(conf) == bl.BlacklistSettings(60, 1, 90, False, False)
    assert bl.BlacklistSettings.from_conf({}) == bl.BlacklistSettings()
    with pytest.raises(bl.BlacklistConfigError, match="tolerance.count"):
        bl.BlacklistSettings.from_conf({"blacklist.scheduler.tolerance.count": 0})
    with pytest.raises(bl.BlacklistConfigError, match="strategy"):
        bl.BlacklistSettings.from_conf({"blacklist.scheduler.strategy": "my.Strategy"})


# --- a monitor round applies it ---

HOSTS = {"s1": SupervisorInfo("h1", [6700], 0), "s2": SupervisorInfo("h2", [6700, 6701], 0)}


def test_a_supervisor_whose_workers_never_start_is_left_and_its_tasks_move_in_that_round():
    """tolerance.count 1: the round that finds the worker dead blacklists its supervisor and
    moves the tasks to the healthy one; the next round keeps them there; after the resume
    time the supervisor is back (in the cluster, and the summaries stop naming it)."""
    settings = replace(SETTINGS, blacklist=replace(SET, tolerance_count=1))
    model = replace(leader(supervisors=HOSTS)[0], settings=settings)
    model, _ = submitted(model, conf={"topology.workers": 1})
    assert set(model.topologies["t-1"].assignment.task_slots.values()) == {("s1", 6700)}
    model, out = handle(model, ev.MonitorTick(61.0, 2000.0, HOSTS, {}))  # launch grace: 60
    assert set(model.topologies["t-1"].assignment.task_slots.values()) == {("s2", 6700)}
    assert "s1" in model.blacklist.reasons() and "never started" in model.blacklist.reasons()["s1"]
    logs = [i for i in out if isinstance(i, ins.AppendLog) and i.type == "blacklist"]
    assert [(i.key, i.values["listed"]) for i in logs] == [("s1", True)]
    beats = {"t-1": {("s2", 6700): beat(1, 1, 2, 3)}}
    model, out = handle(model, ev.MonitorTick(70.0, 2010.0, HOSTS, beats))
    assert not [i for i in out if isinstance(i, ins.WriteAssignment)]
    beats = {"t-1": {("s2", 6700): beat(2, 1, 2, 3)}}
    model, out = handle(model, ev.MonitorTick(61.0 + 1800, 4000.0, HOSTS, beats))
    assert model.blacklist.reasons() == {}
    assert [i.values["listed"] for i in out if getattr(i, "type", "") == "blacklist"] == [False]


def test_a_lost_supervisors_dead_tasks_do_not_blacklist_it():
    settings = replace(SETTINGS, blacklist=replace(SET, tolerance_count=1))
    model = replace(leader(supervisors=HOSTS)[0], settings=settings)
    model, _ = submitted(model, conf={"topology.workers": 1})
    only_s2 = {"s2": HOSTS["s2"]}
    model, _ = handle(model, ev.MonitorTick(61.0, 2000.0, only_s2, {}))
    assert model.blacklist.listed == {}


def test_the_reason_is_shown_in_the_summaries_the_ui_and_squall_list():
    from squall.commands.listing import listing_json, listing_lines
    from squall.nimbus.reads.summaries import cluster_summary
    from squall.ui.cluster_json import supervisor_json

    reasons = {"s1": "blacklisted: 2 failed workers within 300s on supervisor s1"}
    info = cluster_summary({}, {}, {}, HOSTS, [], 1100, None, reasons)
    bad, good = info.supervisors
    assert (bad.blacklisted, bad.blacklist_reason) == (True, reasons["s1"])
    assert (good.blacklisted, good.blacklist_reason) == (False, None)
    assert supervisor_json(bad)["blacklisted"] and supervisor_json(bad)["blacklistReason"]
    assert supervisor_json(good)["blacklistReason"] == ""
    assert f"s1 (h1): {reasons['s1']}" in listing_lines(info)
    assert not any(line.startswith("s2 (h2)") for line in listing_lines(info))
    assert '"blacklist_reason": "blacklisted: 2 failed' in listing_json(info)


def test_below_the_count_a_dead_worker_is_placed_away_from_where_it_died():
    """tolerance.count 2: the first failure blacklists nothing, but the task is not put back
    on the supervisor it just failed on while another has room."""
    model = replace(leader(supervisors=HOSTS)[0], settings=replace(SETTINGS, blacklist=SET))
    model, _ = submitted(model, conf={"topology.workers": 1})
    assert set(model.topologies["t-1"].assignment.task_slots.values()) == {("s1", 6700)}
    model, _ = handle(model, ev.MonitorTick(61.0, 2000.0, HOSTS, {}))
    assert set(model.topologies["t-1"].assignment.task_slots.values()) == {("s2", 6700)}
    assert model.blacklist.listed == {} and len(model.blacklist.failures) == 1


def test_with_nowhere_else_to_go_the_task_stays_where_it_died():
    only = {"s1": HOSTS["s1"]}
    model = replace(leader(supervisors=only)[0], settings=replace(SETTINGS, blacklist=SET))
    model, _ = submitted(model, conf={"topology.workers": 1})
    model, out = handle(model, ev.MonitorTick(61.0, 2000.0, only, {}))
    assert set(model.topologies["t-1"].assignment.task_slots.values()) == {("s1", 6700)}
    assert [i for i in out if isinstance(i, ins.WriteAssignment)]  # restarted in place
