"""Nimbus's decisions as instruction lists: `handle(model, event) -> (model, instructions)`.

Each test pins one decision exactly (which instructions, in which order, with which epoch),
so a one-line change to any of them fails here."""

from dataclasses import replace

import pytest

from squall import thrift_api as T
from squall.nimbus.core import events as ev
from squall.nimbus.core import instructions as ins
from squall.nimbus.core import states
from squall.nimbus.core.coordinator_log import CoordinatorMessage, topology_confs
from squall.nimbus.core.decide import NotLeader, handle
from squall.nimbus.core.model import NimbusModel, NimbusSettings
from squall.records import Assignment, PendingEvent, StormBase, SupervisorInfo, WorkerBeat
from squall.structure import ComponentInfo, TopologyStructure, assign_task_ids
from squall.supervisor.sync import desired_workers

SETTINGS = NimbusSettings(
    task_timeout=30, task_launch=60, message_timeout=25, default_workers=2, default_ackers=0
)
ONE_PORT = {"s1": SupervisorInfo("h1", [6700], 0)}
TWO_HOSTS = {"s1": SupervisorInfo("h1", [6700, 6701], 0), "s2": SupervisorInfo("h2", [6700], 0)}


def component(name, kind, parallelism):
    return ComponentInfo(name, kind, "m", "C", {}, parallelism, (), {"default": ("x",)}, {})


STRUCTURE = TopologyStructure({"a": component("a", "spout", 2), "b": component("b", "bolt", 1)})


def leader(supervisors=TWO_HOSTS, epoch=3, **loaded):
    event = ev.BecameLeader(
        epoch=epoch,
        storm_ids=frozenset(loaded.get("bases", {})) | loaded.get("unreadable", frozenset()),
        assignment_ids=frozenset(loaded.get("assignments", {})),
        bases=loaded.get("bases", {}),
        assignments=loaded.get("assignments", {}),
        supervisors=supervisors,
        stored_ids=frozenset(loaded.get("stored_ids", loaded.get("bases", {}))),
        stored_confs=loaded.get("stored_confs", {}),
        log=tuple(loaded.get("log", ())),
        now=loaded.get("now", 0.0),
        wall=loaded.get("wall", 1000.0),
        tasks=loaded.get("tasks", numbered(loaded.get("bases", {}))),
    )
    return handle(NimbusModel(SETTINGS), event)


def numbered(bases):
    """/tasks as nimbus writes them for these counts."""
    return {tid: assign_task_ids(base.component_executors) for tid, base in bases.items()}


def submitted(model=None, name="t", conf=None, now=0.0, wall=1000.0, inactive=False):
    model = model if model is not None else leader()[0]
    event = ev.Submit(name, f"{name}-1", STRUCTURE, conf or {}, "up", inactive, now, wall)
    return handle(model, event)


def tick(model, now, beats=None, supervisors=None, wall=2000.0):
    supervisors = model.supervisors if supervisors is None else supervisors
    return handle(model, ev.MonitorTick(now, wall, supervisors, beats or {}))


def beat(seq, *tasks):
    return WorkerBeat(seq=seq, time_secs=0, uptime_secs=0, tasks={t: {} for t in tasks})


# --- submit ---


def test_submit_saves_code_creates_the_topology_and_logs_it():
    model, out = submitted(conf={"topology.workers": 2, "x.y": 1})
    base = StormBase("t", "active", 1000, 2, {"a": 2, "b": 1})
    placement = {1: ("s1", 6700), 2: ("s2", 6700), 3: ("s1", 6700)}
    assignment = Assignment(
        3, "t-1", {"s1": "h1", "s2": "h2"}, placement, {1: 1000, 2: 1000, 3: 1000}
    )
    conf = {"topology.workers": 2, "x.y": 1}
    conf |= {"topology.acker.executors": 0, "topology.spouts.track.trees": True}  # resolved
    assert out == [
        ins.SaveCode("t-1", "t", "up", STRUCTURE, conf, 1000.0, 3),
        ins.CreateTopology("t-1", base, {1: "a", 2: "a", 3: "b"}, assignment, 3),
        ins.AppendLog("submit", "t", {"topology": "t-1", "name": "t", "conf": conf, "epoch": 3}, 3),
    ]
    topology = model.topologies["t-1"]
    assert (topology.base, topology.assignment, dict(topology.conf)) == (base, assignment, conf)
    assert topology.assigned_at == {1: 0.0, 2: 0.0, 3: 0.0}


def test_submit_defaults_ackers_to_workers_and_status_to_inactive_on_request():
    ackers = {"topology.spouts.track.trees": False}  # Storm's __acker executors
    model, out = submitted(conf={"topology.acker.executors": None, **ackers}, inactive=True)
    base = model.topologies["t-1"].base
    assert base.status == "inactive"
    assert base.component_executors == {"a": 2, "b": 1, "__acker": 2}  # default workers: 2
    assert model.topologies["t-1"].conf["topology.acker.executors"] == 2
    conf = {"topology.acker.executors": 1, "topology.submitter.user": "u", **ackers}
    model, _ = submitted(conf=conf)
    base = model.topologies["t-1"].base
    assert (base.component_executors["__acker"], base.owner) == (1, "u")


def test_where_spouts_track_their_trees_no_ackers_run_and_the_conf_says_so():
    model, out = submitted(conf={"topology.acker.executors": None})
    topology = model.topologies["t-1"]
    assert topology.base.component_executors == {"a": 2, "b": 1}
    resolved = {"topology.acker.executors": 2, "topology.spouts.track.trees": True}
    assert resolved.items() <= topology.conf.items()  # what workers and getTopologyConf read
    assert resolved.items() <= out[0].conf.items()
    model, _ = submitted()
    assert model.topologies["t-1"].conf["topology.acker.executors"] == 0  # the cluster's: off
    msg = "topology.spouts.track.trees is fixed at submit: kill and submit to change it"
    with pytest.raises(T.InvalidTopologyException, match=msg):
        handle(model, ev.SetConfig("t", "topology.spouts.track.trees", False, 1000.0))


def test_a_second_topology_never_gets_the_first_ones_slots():
    model, _ = submitted(conf={"topology.workers": 2})
    model, out = submitted(model, name="u", conf={"topology.workers": 2})
    [create] = [i for i in out if isinstance(i, ins.CreateTopology)]
    assert set(create.assignment.task_slots.values()) == {("s1", 6701)}
    assert create.assignment.node_host == {"s1": "h1"}


@pytest.mark.parametrize(
    "conf",
    [
        {"topology.workers": 0},
        {"topology.workers": "2"},
        {"topology.acker.executors": -1},
        {"topology.acker.executors": 1.5},
    ],
)
def test_submit_refusals_change_nothing(conf):
    model, _ = leader()
    with pytest.raises(T.InvalidTopologyException):
        submitted(model, conf=conf)
    assert model.topologies == {}


def test_a_topology_of_one_worker_and_no_acker_is_accepted():
    model, _ = submitted(conf={"topology.workers": 1, "topology.acker.executors": 0})
    assert model.topologies["t-1"].base.component_executors == {"a": 2, "b": 1}


def test_duplicate_names_and_standbys_are_refused():
    model, _ = submitted()
    with pytest.raises(T.AlreadyAliveException, match="'t'"):
        submitted(model)
    with pytest.raises(NotLeader):
        submitted(NimbusModel(SETTINGS))


# --- monitor rounds: dead tasks and the unchanged-write skip ---


def one_task_topology(now=0.0):
    """One task on the only slot, submitted at `now`."""
    model, _ = leader(ONE_PORT)
    conf = {"topology.workers": 1}
    one = TopologyStructure({"a": component("a", "spout", 1)})
    return handle(model, ev.Submit("t", "t-1", one, conf, "up", False, now, 1000.0))[0]


def test_an_unchanged_placement_with_live_tasks_writes_nothing():
    model = one_task_topology()
    model, out = tick(model, 10, {"t-1": {("s1", 6700): beat(1, 1)}})
    assert out == []
    model, out = tick(model, 35, {"t-1": {("s1", 6700): beat(2, 1)}})
    assert out == []
    assert model.topologies["t-1"].heartbeats.beats[1].changed_at == 35


def test_launch_grace_then_timeout_without_a_beat():
    model = one_task_topology(now=0)
    assert tick(model, 60)[1] == []  # within nimbus.task.launch.secs
    model, out = tick(model, 61)
    # the dead task goes back on the only slot: a restart with a new start and grace
    assignment = Assignment(3, "t-1", {"s1": "h1"}, {1: ("s1", 6700)}, {1: 2000})
    assert out == [
        ins.WriteAssignment("t-1", assignment, 3),
        ins.AppendLog("assignment", "t-1", {"topology": "t-1", "moved": [1], "epoch": 3}, 3),
    ]
    assert model.topologies["t-1"].assigned_at == {1: 61}
    assert tick(model, 121)[1] == []  # the restart's own grace


def test_a_task_dies_when_its_beat_stops_changing_for_longer_than_the_timeout():
    model = one_task_topology()
    model, _ = tick(model, 50, {"t-1": {("s1", 6700): beat(1, 1)}})
    assert tick(model, 80, {"t-1": {("s1", 6700): beat(1, 1)}})[1] == []
    _, out = tick(model, 81, {"t-1": {("s1", 6700): beat(1, 1)}})
    assert [type(i) for i in out] == [ins.WriteAssignment, ins.AppendLog]


def test_a_beat_from_a_slot_the_task_left_does_not_keep_it_alive():
    model = one_task_topology()
    model, _ = tick(model, 50, {"t-1": {("s9", 6700): beat(1, 1)}})
    assert model.topologies["t-1"].heartbeats.beats == {}
    assert len(tick(model, 61, {"t-1": {("s9", 6700): beat(2, 1)}})[1]) == 2


def test_tasks_of_a_lost_supervisor_move_to_the_others():
    model, _ = submitted(conf={"topology.workers": 2})
    beats = {"t-1": {("s1", 6700): beat(1, 1, 3), ("s2", 6700): beat(1, 2)}}
    model, out = tick(model, 10, beats, supervisors={"s1": TWO_HOSTS["s1"]})
    [write, log] = out
    assert write.assignment.task_slots == {1: ("s1", 6700), 2: ("s1", 6701), 3: ("s1", 6700)}
    assert write.assignment.task_start_secs == {1: 1000, 2: 2000, 3: 1000}
    assert log.values["moved"] == [2]
    assert model.topologies["t-1"].assigned_at == {1: 0.0, 2: 10, 3: 0.0}


def test_monitor_on_a_standby_decides_nothing():
    model = NimbusModel(SETTINGS)
    assert tick(model, 10, supervisors=TWO_HOSTS) == (model, [])


# --- kill and rebalance: delays, timers, and their resumption after a failover ---


def test_kill_waits_then_removes():
    model, _ = submitted()
    model, out = handle(model, ev.Kill("t", None, 1000.0))
    killed = StormBase(
        "t", "killed", 1000, 2, {"a": 2, "b": 1}, "", "active", PendingEvent("remove", 1025.0)
    )
    assert out == [
        ins.WriteBase("t-1", killed, 3),
        ins.StartTimer("t-1", states.Remove(), 25),
        ins.AppendLog("kill", "t-1", {"topology": "t-1", "wait_secs": 25, "epoch": 3}, 3),
    ]
    assert tick(model, 10)[1] == []  # a killed topology is not reassigned
    model, out = handle(model, ev.TimerFired("t-1", states.Remove(), 30, 1025.0))
    assert out == [
        ins.RemoveTopology("t-1", 3),
        ins.AppendLog("kill", "t-1", {"topology": "t-1", "removed": True, "epoch": 3}, 3),
    ]
    assert model.topologies == {}
    assert handle(model, ev.TimerFired("t-1", states.Remove(), 31, 1026.0)) == (model, [])


def test_a_negative_wait_is_refused():
    model, _ = submitted()
    with pytest.raises(T.InvalidTopologyException, match="negative"):
        handle(model, ev.Kill("t", -1, 1000.0))
    assert handle(model, ev.Kill("t", 0, 1000.0))[1][1] == ins.StartTimer("t-1", states.Remove(), 0)


def test_rebalance_waits_then_places_from_scratch_and_restores_the_status():
    model, _ = submitted(conf={"topology.workers": 2})
    model, out = handle(model, ev.Rebalance("t", 5, 3, {"a": 3}, 1000.0))
    pending = PendingEvent("do-rebalance", 1005.0)
    rebalancing = StormBase("t", "rebalancing", 1000, 3, {"a": 3, "b": 1}, "", "active", pending)
    values = {"topology": "t-1", "num_workers": 3, "executors": {"a": 3}, "epoch": 3}
    assert out == [
        ins.WriteBase("t-1", rebalancing, 3),
        ins.StartTimer("t-1", states.DoRebalance(), 5),
        ins.AppendLog("rebalance", "t-1", values, 3),
    ]
    model, out = handle(model, ev.TimerFired("t-1", states.DoRebalance(), 6, 1005.0))
    tasks = {1: "a", 2: "a", 3: "a", 4: "b"}
    assert (out[0].tasks, type(out[0])) == (tasks, ins.WriteTasks)  # with the assignment
    assert out[0].assignment.task_slots == {
        1: ("s1", 6700),
        2: ("s2", 6700),
        3: ("s1", 6701),
        4: ("s1", 6700),
    }
    # b's task was 3 and is 4 now: every worker's task -> component map is stale, so every
    # task restarts, later than any start before
    assert out[1].values["moved"] == [1, 2, 3, 4]
    assert min(out[0].assignment.task_start_secs.values()) == 1005
    restored = StormBase("t", "active", 1000, 3, {"a": 3, "b": 1})
    assert out[2] == ins.WriteBase("t-1", restored, 3)
    assert len(out) == 3 and model.topologies["t-1"].tasks == tasks


def sync_identities(assignment, supervisor="s1"):
    """What the supervisor compares to decide which workers to restart."""
    workers = desired_workers(supervisor, {"t-1": assignment}, [6700, 6701])
    return {key: spec.identity for key, spec in workers.items()}


def test_a_rebalance_that_renumbers_restarts_every_worker_even_within_the_same_second():
    """Shrinking a (tasks 1-2) to one executor moves b from 3 to 2. A worker whose own task
    numbers stayed still holds the old task -> component map (b at 3): it must restart, so
    every start time is bumped past the last one, in the very second of the submit too."""
    model, out = submitted(model=leader(ONE_PORT)[0], conf={"topology.workers": 1})
    before = out[1].assignment
    model, _ = handle(model, ev.Rebalance("t", 0, None, {"a": 1}, 1000.0))
    model, out = handle(model, ev.TimerFired("t-1", states.DoRebalance(), 0, 1000.0))
    assert (out[0].tasks, type(out[0])) == ({1: "a", 2: "b"}, ins.WriteTasks)
    after = out[0].assignment
    assert set(after.slots()) == set(before.slots()) == {("s1", 6700)}
    assert after.task_start_secs == {1: 1001, 2: 1001}
    assert sync_identities(after) != sync_identities(before)


def test_a_rebalance_that_keeps_the_numbering_restarts_only_what_moved():
    model, out = submitted(conf={"topology.workers": 1})
    model, _ = handle(model, ev.Rebalance("t", 0, 2, None, 1010.0))
    model, out = handle(model, ev.TimerFired("t-1", states.DoRebalance(), 0, 1010.0))
    assert not any(isinstance(i, ins.WriteTasks) for i in out)
    moved = out[1].values["moved"]
    assert moved and len(moved) < 3
    assert {t for t, s in out[0].assignment.task_start_secs.items() if s == 1010} == set(moved)


def test_a_leader_that_took_over_during_a_rebalance_rewrites_the_old_tasks():
    """The deposed leader wrote the new counts (a: 3) at the start of the wait; /tasks still
    numbers the old ones (a: 2, b at 3). The new leader reads /tasks, not the counts, so the
    rebalance rewrites them and restarts every worker."""
    rebalancing = StormBase(
        "t", "rebalancing", 0, 1, {"a": 3, "b": 1}, "", "active", PendingEvent("do-rebalance", 0.0)
    )
    placed = Assignment(1, "t-1", {"s1": "h1"}, {t: ("s1", 6700) for t in (1, 2, 3)}, {})
    stale = {1: "a", 2: "a", 3: "b"}
    model, _ = leader(
        ONE_PORT, bases={"t-1": rebalancing}, assignments={"t-1": placed}, tasks={"t-1": stale}
    )
    assert model.topologies["t-1"].tasks == stale
    model, out = handle(model, ev.TimerFired("t-1", states.DoRebalance(), 0, 1000.0))
    assert out[0].tasks == {1: "a", 2: "a", 3: "a", 4: "b"}
    assert out[1].values["moved"] == [1, 2, 3, 4]
    assert model.topologies["t-1"].tasks == out[0].tasks


def test_a_leader_finding_tasks_numbered_otherwise_than_the_counts_rewrites_them():
    """An active topology whose /tasks do not match its counts (a leader went between writing
    the counts and the tasks): the first monitor round rewrites them and restarts the
    workers; tasks that match write nothing (test_after_a_failover_beating_tasks_are_not_dead)."""
    placed = Assignment(1, "t-1", {"s1": "h1"}, {1: ("s1", 6700), 2: ("s1", 6700)}, {1: 5, 2: 5})
    bases = {"t-1": StormBase("t", "active", 0, 1, {"a": 1, "b": 1})}
    stale = {1: "b", 2: "a"}
    model, _ = leader(
        ONE_PORT, bases=bases, assignments={"t-1": placed}, tasks={"t-1": stale}, now=1000.0
    )
    beats = {"t-1": {("s1", 6700): beat(9, 1, 2)}}
    model, out = tick(model, 1010, beats)
    assert (out[0].tasks, out[0].epoch) == ({1: "a", 2: "b"}, 3)
    assert out[0].assignment.task_start_secs == {1: 2000, 2: 2000}
    assert tick(model, 1020, beats)[1] == []


def test_a_leaders_refresh_takes_the_tasks_zookeeper_holds_a_standbys_the_counts():
    """After a decision carried out in part, the leader re-reads: whether its renumbering
    went in or not, the next round must see /tasks as they are, or it would restart every
    worker again each round."""
    model, _ = submitted()
    base, assignment = model.topologies["t-1"].base, model.topologies["t-1"].assignment
    renumbered = {1: "a", 2: "b", 3: "b"}
    refreshed = ev.Refreshed({"t-1": base}, {"t-1": assignment}, TWO_HOSTS, {"t-1": renumbered})
    assert handle(model, refreshed)[0].topologies["t-1"].tasks == renumbered
    standby = ev.Refreshed({"t-1": base}, {"t-1": assignment}, TWO_HOSTS)
    assert handle(model, standby)[0].topologies["t-1"].tasks == {1: "a", 2: "a", 3: "b"}


@pytest.mark.parametrize(
    ("workers", "executors", "problem"),
    [(0, None, "workers"), (None, {"zz": 1}, "'zz'"), (None, {"a": 0}, "'a'")],
)
def test_rebalance_refusals(workers, executors, problem):
    model, _ = submitted()
    with pytest.raises(T.InvalidTopologyException, match=problem):
        handle(model, ev.Rebalance("t", 0, workers, executors, 1000.0))
    assert handle(model, ev.Rebalance("t", 0, 1, {"a": 1}, 1000.0))[1]  # the boundary is fine


def test_a_new_leader_resumes_delayed_transitions_and_reconciles_the_store():
    bases = {
        "k-1": StormBase("k", "killed", 0, 1, {"a": 1}, pending=PendingEvent("remove", 1010.0)),
        "r-1": StormBase(
            "r", "rebalancing", 0, 1, {"a": 1}, "", "active", PendingEvent("do-rebalance", 990.0)
        ),
        "gone-1": StormBase("gone", "active", 0, 1, {"a": 1}),
    }
    placed = Assignment(1, "k-1", {"s1": "h1"}, {1: ("s1", 6700)}, {1: 5})
    model, out = leader(
        epoch=7,
        bases=bases,
        assignments={"k-1": placed, "orphan-1": placed},
        stored_ids={"k-1", "r-1", "code-only-1"},
        unreadable=frozenset({"ghost-1"}),
        now=500.0,
        wall=1004.0,
    )
    assert out == [
        ins.RemoveCode("code-only-1", 7),
        ins.RemoveTopology("ghost-1", 7),
        ins.RemoveTopology("gone-1", 7),
        ins.RemoveOrphanAssignment("orphan-1", 7),
        ins.StartTimer("k-1", states.Remove(), 6.0),
        ins.StartTimer("r-1", states.DoRebalance(), 0.0),
    ]
    assert (model.epoch, model.leading, sorted(model.topologies)) == (7, True, ["k-1", "r-1"])
    assert model.topologies["k-1"].assigned_at == {1: 500.0}  # fresh grace after failover


def test_after_a_failover_beating_tasks_are_not_dead():
    placed = Assignment(1, "t-1", {"s1": "h1"}, {1: ("s1", 6700)}, {1: 5})
    bases = {"t-1": StormBase("t", "active", 0, 1, {"a": 1})}
    model, _ = leader(ONE_PORT, bases=bases, assignments={"t-1": placed}, now=1000.0)
    assert tick(model, 1070, {"t-1": {("s1", 6700): beat(9, 1)}})[1] == []


# --- epoch fencing ---


def message(seq, type_, key, epoch, **values):
    return CoordinatorMessage(seq, "1", type_, key, "h", "u", "n", 0.0, {**values, "epoch": epoch})


def test_replay_ignores_a_deposed_leaders_late_messages():
    log = [
        message(1, "submit", "t", 1, topology="t-1", conf={"k": 1}),
        message(2, "set-config", "k", 2, topology="t-1", value=2),
        message(3, "set-config", "k", 1, topology="t-1", value=99),  # late, from epoch 1
    ]
    bases = {"t-1": StormBase("t", "active", 0, 1, {"a": 1})}
    model, _ = leader(bases=bases, log=log, stored_confs={"t-1": {"k": 0}})
    assert model.topologies["t-1"].conf == {"k": 2}
    model, _ = leader(bases=bases, log=[], stored_confs={"t-1": {"k": 0}})
    assert model.topologies["t-1"].conf == {"k": 0}  # no log: the stored conf


def test_every_write_carries_the_leaders_epoch():
    model, out = submitted(leader(epoch=11)[0])
    model, more = handle(model, ev.Kill("t", 0, 1000.0))
    writes = [i for i in out + more if not isinstance(i, ins.StartTimer)]
    assert {i.epoch for i in writes} == {11}
    assert {i.values["epoch"] for i in writes if isinstance(i, ins.AppendLog)} == {11}
    assert out[1].assignment.epoch == 11


# --- status changes and config set ---


def test_activate_deactivate_and_illegal_states():
    model, _ = submitted(inactive=True)
    model, out = handle(model, ev.Activate("t", 1000.0))
    assert out == [ins.WriteBase("t-1", StormBase("t", "active", 1000, 2, {"a": 2, "b": 1}), 3)]
    assert handle(model, ev.Activate("t-1", 1000.0))[1] == []  # by id, already active
    model, out = handle(model, ev.Deactivate("t", 1000.0))
    assert out[0].base.status == "inactive"
    model, _ = handle(model, ev.Kill("t", 5, 1000.0))
    with pytest.raises(T.IllegalStateException, match="killed"):
        handle(model, ev.Activate("t", 1000.0))
    with pytest.raises(T.NotAliveException, match="nope"):
        handle(model, ev.Deactivate("nope", 1000.0))


def test_config_set_logs_updates_and_resizes_on_topology_workers():
    model, _ = submitted(conf={"x.y": 1})
    model, out = handle(model, ev.SetConfig("t", "x.z", "v", 1000.0))
    conf = {"x.y": 1, "topology.acker.executors": 0, "topology.spouts.track.trees": True}
    conf |= {"x.z": "v"}
    assert out == [
        ins.AppendLog("set-config", "x.z", {"topology": "t-1", "value": "v", "epoch": 3}, 3),
        ins.UpdateConf("t-1", conf, 3),
    ]
    model, out = handle(model, ev.SetConfig("t", "topology.workers", 3, 1000.0))
    assert [type(i) for i in out] == [
        ins.AppendLog,
        ins.UpdateConf,
        ins.WriteBase,
        ins.StartTimer,
        ins.AppendLog,
    ]
    assert out[1].conf == {**conf, "topology.workers": 3}
    assert (out[2].base.num_workers, out[3].delay_secs) == (3, 0)
    assert model.topologies["t-1"].conf == {**conf, "topology.workers": 3}


@pytest.mark.parametrize(
    ("key", "value"),
    [("topology.workers", 0), ("nimbus.thrift.port", 1), ("topology.wokers", 2)],
)
def test_config_set_refusals(key, value):
    model, _ = submitted()
    with pytest.raises(T.InvalidTopologyException, match=key):
        handle(model, ev.SetConfig("t", key, value, 1000.0))


def test_rebalance_conf_overrides_merge_into_the_conf_and_survive_a_new_leader():
    """Storm 2's RebalanceOptions.topology_conf_overrides: merged into the topology's conf
    (as `config set` would set each key), written for the workers the rebalance restarts,
    logged so that a nimbus taking the lead rebuilds the same conf; topology.workers among
    them resizes as num_workers would."""
    model, _ = submitted(conf={"x.y": 1})
    conf = {"x.y": 2, "topology.workers": 3}
    model, out = handle(model, ev.Rebalance("t", 5, None, None, 1000.0, conf=conf))
    assert [type(i) for i in out] == [
        ins.WriteBase,
        ins.StartTimer,
        ins.AppendLog,
        ins.AppendLog,
        ins.UpdateConf,
    ]
    assert out[0].base.num_workers == 3
    assert out[3] == ins.AppendLog(
        "rebalance-conf", "t-1", {"topology": "t-1", "conf": conf, "epoch": 3}, 3
    )
    merged = model.topologies["t-1"].conf
    assert out[4] == ins.UpdateConf("t-1", merged, 3)
    assert (merged["x.y"], merged["topology.workers"]) == (2, 3)
    submit = CoordinatorMessage(
        1,
        "v",
        "submit",
        "t-1",
        "h",
        "u",
        "s",
        0.0,
        {"topology": "t-1", "conf": {"x.y": 1}, "epoch": 3},
    )
    logged = CoordinatorMessage(2, "v", out[3].type, out[3].key, "h", "u", "s", 0.0, out[3].values)
    assert topology_confs([submit, logged])["t-1"] == {"x.y": 2, "topology.workers": 3}


@pytest.mark.parametrize(
    ("conf", "problem"),
    [
        ({"topology.spouts.track.trees": False}, "fixed at submit"),
        ({"topology.workers": 0}, "workers"),
        ({"topology.wokers": 2}, "topology.wokers"),
    ],
)
def test_rebalance_conf_override_refusals(conf, problem):
    model, _ = submitted()
    with pytest.raises(T.InvalidTopologyException, match=problem):
        handle(model, ev.Rebalance("t", 0, None, None, 1000.0, conf=conf))


def test_rebalance_resource_overrides_change_what_the_scheduler_places_by():
    """Storm 2's topology_resources_overrides: per component, what one task declares from
    now on (Storm's names; generic resources too), written with the rebalancing base. A
    topology placed by slot count becomes resource-aware, its other components at Storm's
    defaults."""
    model, _ = submitted()
    assert model.topologies["t-1"].base.component_resources == {}
    wanted = {"b": {"onheap.memory.mb": 512.0, "cpu.pcore.percent": 50.0, "gpu.count": 1.0}}
    model, out = handle(model, ev.Rebalance("t", 5, None, None, 1000.0, resources=wanted))
    base = out[0].base
    assert base.component_resources == {
        "__acker": (128.0, 10.0),
        "a": (128.0, 10.0),
        "b": (512.0, 50.0),
    }
    assert base.component_generic == {"b": {"gpu.count": 1.0}}
    assert model.topologies["t-1"].base == base
    assert out[-1].type == "rebalance-resources" and out[-1].values["resources"] == wanted
    again = {"b": {"topology.component.cpu.pcore.percent": 20, "gpu.count": 0}}
    model, _ = handle(model, ev.TimerFired("t-1", states.DoRebalance(), 6, 1005.0))
    model, out = handle(model, ev.Rebalance("t", 0, None, None, 1000.0, resources=again))
    assert out[0].base.component_resources["b"] == (512.0, 20.0)  # memory as it was
    assert out[0].base.component_generic == {}


@pytest.mark.parametrize(
    ("resources", "problem"),
    [
        ({"zz": {"cpu.pcore.percent": 1.0}}, "'zz'"),
        ({"b": {"cpu.pcore.percent": -1.0}}, "at least 0"),
        ({"b": {"onheap.memory.mb": 100_000.0}}, "more than topology.worker.max.heap.size.mb"),
    ],
)
def test_rebalance_resource_override_refusals(resources, problem):
    model, _ = submitted()
    with pytest.raises(T.InvalidTopologyException, match=problem):
        handle(model, ev.Rebalance("t", 0, None, None, 1000.0, resources=resources))
    assert model.topologies["t-1"].base.component_resources == {}


def test_a_rebalancing_topology_refuses_a_worker_change_without_logging_it():
    model, _ = submitted()
    model, _ = handle(model, ev.Rebalance("t", 30, None, None, 1000.0))
    with pytest.raises(T.IllegalStateException):
        handle(model, ev.SetConfig("t", "topology.workers", 1, 1000.0))


# --- dispatch and standbys ---


def test_an_unknown_event_raises():
    with pytest.raises(TypeError, match="no decision"):
        handle(NimbusModel(SETTINGS), object())


def test_a_standby_refreshes_from_zookeeper():
    bases = {"t-1": StormBase("t", "active", 0, 1, {"a": 2})}
    model, out = handle(NimbusModel(SETTINGS), ev.Refreshed(bases, {}, ONE_PORT))
    assert out == [] and model.find("t").tasks == {1: "a", 2: "a"}
    assert (model.leading, model.supervisors) == (False, ONE_PORT)


def test_a_leader_resyncs_records_and_keeps_what_only_it_knows():
    model, _ = submitted(conf={"k": 1})
    model, _ = tick(model, 10, {"t-1": {("s1", 6700): beat(1, 1, 3), ("s2", 6700): beat(1, 2)}})
    before = model.topologies["t-1"]
    killed = replace(before.base, status="killed")
    ghost = StormBase("g", "active", 0, 1, {"a": 1})
    synced, out = handle(model, ev.Refreshed({"t-1": killed, "g-1": ghost}, {}, ONE_PORT))
    after = synced.topologies["t-1"]
    assert out == [] and synced.leading and synced.supervisors == ONE_PORT
    assert (after.base, after.assignment) == (killed, None)
    assert (after.heartbeats, after.assigned_at, after.conf) == (
        before.heartbeats,
        before.assigned_at,
        before.conf,
    )
    assert synced.topologies["g-1"].tasks == {1: "a"}
    assert handle(synced, ev.Refreshed({}, {}, {}))[0].topologies == {}


def test_a_standby_refuses_every_write_even_for_a_topology_it_can_see():
    bases = {"t-1": StormBase("t", "active", 0, 1, {"a": 2})}
    standby, _ = handle(NimbusModel(SETTINGS), ev.Refreshed(bases, {}, ONE_PORT))
    for event in (
        ev.Submit("u", "u-1", STRUCTURE, {}, "up", False, 0.0, 1000.0),
        ev.Kill("t", 0, 1000.0),
        ev.Rebalance("t", 0, 1, {"zz": 1}, 1000.0),
        ev.Activate("t", 1000.0),
        ev.Deactivate("t", 1000.0),
        ev.SetConfig("t", "nimbus.x", 1, 1000.0),
    ):
        with pytest.raises(NotLeader):
            handle(standby, event)


def test_an_unknown_status_machine_instruction_raises(monkeypatch):
    model, _ = submitted()
    monkeypatch.setattr(states, "transition", lambda *args: [object()])
    with pytest.raises(TypeError, match="status-machine instruction"):
        handle(model, ev.Activate("t", 1000.0))


def test_settings_come_from_the_cluster_conf():
    from squall.config import load_defaults

    conf = {
        **load_defaults(),
        "nimbus.task.timeout.secs": 7,
        "nimbus.task.launch.secs": 8,
        "topology.message.timeout.secs": 9,
        "topology.workers": 3,
        "topology.acker.executors": 0,
    }
    settings = NimbusSettings.from_conf(conf)
    assert settings.scheduling["topology.priority"] == 29  # the scheduler's cluster defaults
    assert replace(settings, scheduling={}, cap_exempt=frozenset()) == NimbusSettings(7, 8, 9, 3, 0)


def test_an_unreadable_storm_record_whose_code_is_stored_is_neither_loaded_nor_removed():
    model, out = leader(unreadable=frozenset({"ghost-1"}), stored_ids={"ghost-1"})
    assert (out, dict(model.topologies)) == ([], {})


# --- resource-aware scheduling through the decisions ---

MEMORY = "topology.component.resources.onheap.memory.mb"


def test_a_component_larger_than_a_worker_is_refused_at_submit():
    with pytest.raises(T.InvalidTopologyException, match="could never be scheduled"):
        submitted(conf={MEMORY: 1000.0})


def test_a_topology_that_cannot_fit_is_not_placed_and_says_why():
    small = {"s1": SupervisorInfo("h1", [6700, 6701], 0, memory_capacity_mb=300.0)}
    model, _ = leader(supervisors=small)
    model, out = submitted(model, conf={MEMORY: 200.0})  # 3 tasks x 200 MB on 300 MB
    topology = model.topologies["t-1"]
    assert topology.assignment.task_slots == {}
    assert topology.sched_status.startswith("Not enough resources to schedule")
    assert topology.base.component_resources["a"] == (200.0, 10.0)
    # the monitor round keeps it unplaced and writes nothing for it
    model, out = tick(model, 1.0)
    assert out == [] and model.topologies["t-1"].sched_status == topology.sched_status


def test_one_monitor_round_schedules_every_topology_from_one_snapshot():
    model, _ = submitted(conf={"topology.workers": 3})
    model, _ = submitted(model, name="u", conf={"topology.workers": 3})
    used = [set(model.topologies[t].assignment.task_slots.values()) for t in ("t-1", "u-1")]
    assert not used[0] & used[1]  # no slot runs two topologies
    model, out = tick(model, 1.0)
    assert out == []  # nothing changed: nothing moves, nothing is written
    statuses = {t.sched_status for t in model.topologies.values()}
    assert statuses == {"Fully Scheduled", "Not scheduled: no free slot"}
