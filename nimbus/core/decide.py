"""Nimbus's decisions: `handle(model, event) -> (model, instructions)`, pure.

Every request, from a user (submit, kill, rebalance, ...) or from the system (monitor
rounds, timers, taking the lead), is one event through this function. A refusal
(NotAliveException, AlreadyAliveException, IllegalStateException, InvalidTopologyException,
NotLeader) is raised before any instruction is produced, so a refused request changes
nothing. Dispatch is exhaustive: an event of an unknown type raises TypeError.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import replace
from typing import Any

from squall import thrift_api as T
from squall.nimbus.core import events as ev
from squall.nimbus.core import instructions as ins
from squall.nimbus.core import log_debug, states
from squall.nimbus.core.coordinator_log import topology_confs
from squall.nimbus.core.heartbeats import HeartbeatCache
from squall.nimbus.core.model import ClusterSnapshot, NimbusModel, TopologyModel, synced_with
from squall.nimbus.core.occupancy import current
from squall.nimbus.core.reassign import log_message, place_new, reassign_round, reassign_touched
from squall.nimbus.core.supervisor_change import narrowed_cluster, touched_topologies
from squall.nimbus.rpc.request_checks import (
    ACKERS_KEY,
    check_ackers,
    check_fits_a_worker,
    check_resources,
    check_size,
    check_workers,
    wait_secs_of,
    whole,
)
from squall.nimbus.scheduling.resource_conf import (
    generic_resources,
    overridden_resources,
    worker_heap,
)
from squall.nimbus.scheduling.scheduler import start_times
from squall.records import Assignment, StormBase, SupervisorInfo
from squall.structure import ACKER
from squall.tree_tracking import SPOUTS_TRACK_KEY, acker_executors
from squall.validation import check_name_free, check_topology_setting, invalid

Result = tuple[NimbusModel, list[ins.Instruction]]


class NotLeader(Exception):
    """A write reached a nimbus that does not lead (the shell names the leader)."""


USER_EVENTS = (
    ev.Submit,
    ev.Kill,
    ev.Rebalance,
    ev.Activate,
    ev.Deactivate,
    ev.SetConfig,
    ev.SetLogConfig,
    ev.Debug,
)


def handle(model: NimbusModel, event: ev.Event) -> Result:
    if isinstance(event, USER_EVENTS) and not model.leading:
        raise NotLeader("this nimbus is not the leader")
    match event:
        case ev.Submit():
            return _submit(model, event)
        case ev.Kill():
            return _kill(model, event)
        case ev.Rebalance():
            return _rebalance(model, event)
        case ev.Activate():
            return _user_transition(model, event.name, states.ActivateAction(), event.wall)
        case ev.Deactivate():
            return _user_transition(model, event.name, states.DeactivateAction(), event.wall)
        case ev.SetConfig():
            return _set_config(model, event)
        case ev.SetLogConfig():
            return log_debug.set_log_config(model, event)
        case ev.Debug():
            return log_debug.debug(model, event)
        case ev.MonitorTick():  # SupervisorsChanged too
            return _monitor(model, event)
        case ev.BecameLeader():
            return _became_leader(model, event)
        case ev.TimerFired():
            if not model.leading or event.topology_id not in model.topologies:
                return model, []
            return _apply(model, event.topology_id, event.event, event.now, event.wall)
        case ev.Refreshed():
            records = (event.bases, event.assignments, event.supervisors, event.tasks)
            return synced_with(model, *records), []
        case _:
            raise TypeError(f"nimbus has no decision for {event!r}")


# --- user requests ---


def _submit(model: NimbusModel, e: ev.Submit) -> Result:
    check_name_free(e.name, [(t.base.name, tid) for tid, t in model.topologies.items()])
    num_workers = check_workers(e.conf.get("topology.workers", model.settings.default_workers))
    ackers = e.conf.get(ACKERS_KEY, model.settings.default_ackers)
    ackers = check_ackers(num_workers if ackers is None else ackers)
    spouts_track = e.conf.get(SPOUTS_TRACK_KEY, model.settings.spouts_track_trees)
    conf = {**e.conf, ACKERS_KEY: ackers, SPOUTS_TRACK_KEY: spouts_track}  # resolved, as run
    executors = e.structure.task_counts()
    if acker_executors(ackers, spouts_track):
        executors[ACKER] = ackers
    status = states.TopologyStatus.INACTIVE if e.inactive else states.TopologyStatus.ACTIVE
    base = StormBase(
        name=e.name,
        status=status.value,
        launch_time_secs=int(e.wall),
        num_workers=num_workers,
        component_executors=executors,
        owner=str(e.conf.get("topology.submitter.user", "")),
        component_resources=check_resources(model, e),
        component_generic=generic_resources(e.structure, e.conf, model.settings),
    )
    tid, epoch = e.topology_id, model.epoch
    tasks = check_size(model, tid, base, {})
    snapshot = ClusterSnapshot.of(model)
    new = TopologyModel(tid, base, tasks, None, HeartbeatCache(), {}, conf)
    outcome = place_new(model, new)
    placement = dict(outcome.placement)
    starts = start_times(placement, {}, {}, base.launch_time_secs)
    assignment = Assignment(epoch, tid, snapshot.hosts(placement), placement, starts)
    topology = replace(
        new,
        assignment=assignment,
        assigned_at={t: e.now for t in placement},
        sched_status=outcome.status,
    )
    values = {"topology": tid, "name": e.name, "conf": conf}
    return model.with_topology(topology), [
        ins.SaveCode(tid, e.name, e.location, e.structure, conf, e.wall, epoch),
        ins.CreateTopology(tid, base, tasks, assignment, epoch),
        log_message("submit", e.name, values, epoch),
    ]


def _user_transition(model: NimbusModel, name: str, event: states.Event, wall: float) -> Result:
    """A user's status change; these never reassign, so no monotonic time is needed."""
    tid = model.find(name).id
    try:
        return _apply(model, tid, event, wall, wall)
    except states.IllegalTransition as exc:
        raise T.IllegalStateException(msg=str(exc)) from exc


def _kill(model: NimbusModel, e: ev.Kill) -> Result:
    tid = model.find(e.name).id  # NotAliveException first, as Storm checks: then the wait
    wait = wait_secs_of(model.settings, e.wait_secs)
    model, out = _user_transition(model, e.name, states.KillAction(wait), e.wall)
    values = {"topology": tid, "wait_secs": wait}
    return model, [*out, log_message("kill", tid, values, model.epoch)]


def _rebalance(model: NimbusModel, e: ev.Rebalance) -> Result:
    """Storm's rebalance: new worker and executor counts, and Storm 2's overrides of the
    topology's conf (merged into it, as `squall config set` would set each key) and of its
    components' resources (what the resource-aware scheduler places them by from now on)."""
    topology = model.find(e.name)
    for key, value in sorted(e.conf.items()):
        _check_setting(model, topology, key, value)
    if e.num_workers is None and "topology.workers" in e.conf:
        e = replace(e, num_workers=check_workers(e.conf["topology.workers"]))
    if e.resources:
        topology = _with_resources(model, topology, e.resources)
        model = model.with_topology(topology)
    components = topology.base.component_executors
    for component, count in (e.executors or {}).items():
        if component not in components:
            name = topology.base.name  # e.name may be the id the call was authorized on
            raise invalid(f"rebalance: {component!r} is not a component of {name!r}")
        if not whole(count) or count < 1:
            raise invalid(f"rebalance: component {component!r} needs at least 1 executor")
    if e.num_workers is not None:
        check_workers(e.num_workers)
    counts = {**components, **(e.executors or {})}
    check_size(
        model, topology.id, replace(topology.base, component_executors=counts), topology.tasks
    )
    executors = tuple(sorted((e.executors or {}).items()))
    event = states.RebalanceAction(
        wait_secs_of(model.settings, e.wait_secs), e.num_workers, executors
    )
    model, out = _user_transition(model, e.name, event, e.wall)
    values = {"topology": topology.id, "num_workers": e.num_workers, "executors": dict(executors)}
    out = [*out, log_message("rebalance", topology.id, values, model.epoch)]
    if e.resources:  # the base the transition wrote holds them (WriteBase)
        resources = {c: dict(r) for c, r in e.resources.items()}
        values = {"topology": topology.id, "resources": resources}
        out.append(log_message("rebalance-resources", topology.id, values, model.epoch))
    if e.conf:  # reaches the workers as the rebalance restarts them
        conf = {**model.topologies[topology.id].conf, **e.conf}
        model = model.with_topology(replace(model.topologies[topology.id], conf=conf))
        values = {"topology": topology.id, "conf": dict(e.conf)}
        out += [
            log_message("rebalance-conf", topology.id, values, model.epoch),
            ins.UpdateConf(topology.id, conf, model.epoch),
        ]
    return model, out


def _with_resources(
    model: NimbusModel, topology: TopologyModel, overrides: Mapping[str, Mapping[str, float]]
) -> TopologyModel:
    """`topology` with a rebalance's resource overrides in its base, checked."""
    base = topology.base
    names = set(base.component_executors) - {ACKER}
    mem_cpu, generic = overridden_resources(
        base.component_resources, base.component_generic, names, overrides
    )
    check_fits_a_worker(mem_cpu, worker_heap(topology.conf, model.settings))
    base = replace(base, component_resources=mem_cpu, component_generic=generic)
    return replace(topology, base=base)


def _check_setting(model: NimbusModel, topology: TopologyModel, key: str, value: Any) -> None:
    """A topology setting changed while it runs, checked (InvalidTopologyException)."""
    check_topology_setting(key, value)
    if key == SPOUTS_TRACK_KEY:  # it decides which executors the topology has
        raise invalid(f"{SPOUTS_TRACK_KEY} is fixed at submit: kill and submit to change it")
    if key == ACKERS_KEY:
        ackers = check_ackers(topology.base.num_workers if value is None else value)
        ackers = acker_executors(ackers, topology.conf.get(SPOUTS_TRACK_KEY, False))
        counts = {**topology.base.component_executors, ACKER: ackers}
        base = replace(topology.base, component_executors=counts)
        check_size(model, topology.id, base, topology.tasks)


def _set_config(model: NimbusModel, e: ev.SetConfig) -> Result:
    """`squall config set`: topology.workers rebalances at once; other settings reach
    workers as they (re)start."""
    topology = model.find(e.name)
    _check_setting(model, topology, e.key, e.value)
    rebalanced: Result = (model, [])
    if e.key == "topology.workers":
        resize = ev.Rebalance(e.name, 0, check_workers(e.value), None, e.wall)
        rebalanced = _rebalance(model, resize)
    model, rebalance_out = rebalanced
    conf = {**topology.conf, e.key: e.value}
    model = model.with_topology(replace(model.topologies[topology.id], conf=conf))
    values = {"topology": topology.id, "value": e.value}
    return model, [
        log_message("set-config", e.key, values, model.epoch),
        ins.UpdateConf(topology.id, conf, model.epoch),
        *rebalance_out,
    ]


# --- system events ---


def _monitor(model: NimbusModel, e: ev.MonitorTick) -> Result:
    if not model.leading:
        return model, []
    before = model.supervisors
    # the occupancy is built here once after a lead is taken, then carried from round to round
    model = replace(model, supervisors=e.supervisors).occupied()
    if isinstance(e, ev.SupervisorsChanged):
        return _supervisors_changed(model, before, e)
    # Every topology the status machine reschedules (active and inactive ones), in one
    # scheduler call over one cluster snapshot.
    return reassign_round(model, _due(model, model.topologies, e.wall), e.beats, e.now, e.wall)


def _due(model: NimbusModel, ids: Iterable[str], wall: float) -> dict[str, bool]:
    """Of `ids`, the topologies a monitor round reschedules (live tasks stay, dead move)."""
    return {
        tid: False
        for tid in sorted(ids)
        if states.transition(model.topologies[tid].base, states.Monitor(), wall)
        == [states.Reassign(scratch=False)]
    }


def _supervisors_changed(
    model: NimbusModel, before: Mapping[str, SupervisorInfo], e: ev.MonitorTick
) -> Result:
    """When supervisors only left, only the topologies on them are rescheduled
    (nimbus/core/supervisor_change.py), against the free slots alone where that gives the same
    outcome, so a lost host costs what it ran, not the cluster's size; reassign_touched falls
    back to every due topology when that round leaves one unplaced."""
    occupancy = current(model.occupancy, model.topologies)  # _monitor made it current
    touched = touched_topologies(occupancy, before, e.supervisors)
    if touched is None:  # a supervisor came: every topology may use it
        return reassign_round(model, _due(model, model.topologies, e.wall), e.beats, e.now, e.wall)
    narrowed = _due(model, touched, e.wall)
    if not narrowed:
        return model, []
    rescheduled = {tid: model.topologies[tid] for tid in narrowed}
    cluster = narrowed_cluster(occupancy, rescheduled, e.supervisors, model.settings)

    def due() -> dict[str, bool]:
        return _due(model, model.topologies, e.wall)

    return reassign_touched(model, narrowed, due, e.beats, e.now, e.wall, cluster)


def _became_leader(model: NimbusModel, e: ev.BecameLeader) -> Result:
    """Storm's prepare: reconcile ZooKeeper with the store, rebuild confs from the log,
    give every placed task a fresh launch grace, and resume delayed transitions."""
    epoch, storms = e.epoch, e.storm_ids
    out: list[ins.Instruction] = []
    out += [ins.RemoveCode(t, epoch) for t in sorted(e.stored_ids - storms)]
    out += [ins.RemoveTopology(t, epoch) for t in sorted(storms - e.stored_ids)]
    out += [ins.RemoveOrphanAssignment(t, epoch) for t in sorted(e.assignment_ids - storms)]
    replayed = topology_confs(iter(e.log))
    topologies = {}
    for tid in sorted(set(e.bases) & storms & e.stored_ids):
        base, assignment = e.bases[tid], e.assignments.get(tid)
        placement = assignment.task_slots if assignment else {}
        conf = replayed.get(tid) or e.stored_confs.get(tid, {})
        # the ids ZooKeeper holds, not those the counts give: where they differ, the
        # topology's next placement rewrites /tasks and restarts its workers (reassign.py)
        tasks = dict(e.tasks.get(tid, {}))
        grace = {t: e.now for t in placement}
        log_config = e.log_configs.get(tid, {})
        topologies[tid] = TopologyModel(
            tid, base, tasks, assignment, HeartbeatCache(), grace, conf, log_config
        )
    model = NimbusModel(model.settings, topologies, dict(e.supervisors), epoch, leading=True)
    for tid in sorted(topologies):
        model, more = _apply(model, tid, states.Startup(), e.now, e.wall)
        out += more
    return model, out


# --- carrying out the status machine's instructions on the model ---


def _apply(
    model: NimbusModel,
    tid: str,
    event: states.Event,
    now: float,
    wall: float,
) -> Result:
    out: list[ins.Instruction] = []
    epoch = model.epoch
    for step in states.transition(model.topologies[tid].base, event, wall):
        match step:
            case states.SetBase(base=base):
                topology = replace(model.topologies[tid], base=base)
                model = model.with_topology(topology)
                out.append(ins.WriteBase(tid, base, epoch))
            case states.Reassign(scratch=scratch):
                model, more = reassign_round(model, {tid: scratch}, {tid: {}}, now, wall)
                out += more
            case states.ScheduleEvent(event=delayed, delay_secs=delay):
                out.append(ins.StartTimer(tid, delayed, delay))
            case states.RemoveNow():
                model = model.without(tid)
                out.append(ins.RemoveTopology(tid, epoch))
                values = {"topology": tid, "removed": True}
                out.append(log_message("kill", tid, values, epoch))
            case _:
                raise TypeError(f"unknown status-machine instruction {step!r}")
    return model, out
