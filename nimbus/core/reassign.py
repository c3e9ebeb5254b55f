"""Placement decisions for nimbus's model: which tasks are dead, one call of the cluster
scheduler for every topology (nimbus/scheduling/cluster_scheduler.py), and what needs writing. Pure:
the model, beats and clocks come in."""

from __future__ import annotations

import logging
from collections.abc import Callable, Mapping
from dataclasses import replace

from squall.nimbus.core.heartbeats import tokens_from_beats, unready_tasks
from squall.nimbus.core.instructions import AppendLog, Instruction, WriteAssignment, WriteTasks
from squall.nimbus.core.model import ClusterSnapshot, NimbusModel, TopologyModel
from squall.nimbus.scheduling import blacklist as bl
from squall.nimbus.scheduling.cluster_scheduler import schedule_all
from squall.nimbus.scheduling.resource_conf import cluster_of, request_of
from squall.nimbus.scheduling.schedule_invariants import round_violations
from squall.nimbus.scheduling.scheduler import start_times
from squall.nimbus.scheduling.scheduling_input import Cluster, Host, Outcome, TopologyRequest
from squall.records import Assignment, Slot, WorkerBeat
from squall.structure import assign_task_ids

log = logging.getLogger(__name__)


def log_message(type_: str, key: str, values: Mapping, epoch: int) -> AppendLog:
    """Every coordinator-log message carries the epoch, so replay can ignore a deposed
    leader's late writes (store.topology_confs)."""
    return AppendLog(type_, key, {**values, "epoch": epoch}, epoch)


def place_new(model: NimbusModel, topology: TopologyModel) -> Outcome:
    """Where a topology being submitted goes, every other topology keeping its place."""
    model = model.with_topology(topology)
    requests = [
        request_of(t, model.settings, reschedule=tid == topology.id)
        for tid, t in sorted(model.topologies.items())
    ]
    cluster = _cluster(model, model.blacklist)
    outcomes = schedule_all(requests, cluster)
    broken = round_violations(requests, cluster, outcomes)
    if broken:  # place nothing now; the next round tries again
        log.error("placement of %s refused, it breaks: %s", topology.id, "; ".join(broken))
        return Outcome({}, "Not scheduled: the scheduler's outcome was refused", placed=False)
    return outcomes[topology.id]


def _cluster(
    model: NimbusModel, blacklist: bl.Blacklist, narrowed: Cluster | None = None
) -> Cluster:
    """What the scheduler may use: the live supervisors (or the narrowed view) less the
    blacklisted ones, with the per-user slot cap."""
    settings = model.settings
    cluster = cluster_of(model.supervisors, settings) if narrowed is None else narrowed
    cluster = replace(cluster, slot_cap=settings.slots_per_user, cap_exempt=settings.cap_exempt)
    return bl.in_service(cluster, blacklist)


def reassign_round(
    model: NimbusModel,
    scratch: Mapping[str, bool],
    beats: Mapping[str, Mapping[Slot, WorkerBeat]],
    now: float,
    wall: float,
) -> tuple[NimbusModel, list[Instruction]]:
    """Reschedule the topologies in `scratch` (True: a rebalance, every task placed afresh;
    False: live tasks stay put, dead ones move) in one scheduler call over the whole cluster;
    the others keep their places. An unchanged placement with no dead task writes nothing."""
    model, out, _ = _round(model, scratch, beats, now, wall)
    return model, out


def reassign_touched(
    model: NimbusModel,
    touched: Mapping[str, bool],
    due: Callable[[], Mapping[str, bool]],
    beats: Mapping[str, Mapping[Slot, WorkerBeat]],
    now: float,
    wall: float,
    cluster: Cluster | None = None,
) -> tuple[NimbusModel, list[Instruction]]:
    """Reschedule only `touched` (nimbus/core/supervisor_change.py), every other topology a fixed
    occupant; if any topology of that round is left unplaced (it could not fit, or evicted
    one), decide the round over every `due()` topology instead: only that round may evict
    topologies outside `touched`, and the narrowed one is then thrown away, written nowhere.
    With `cluster` (supervisor_change.narrowed_cluster: the free slots and the touched ones'
    own) the scheduler sees the touched topologies alone, so the round costs what they hold
    and the free capacity, not a request per topology of the cluster."""
    decided, out, outcomes = _round(model, touched, beats, now, wall, cluster)
    if all(outcome.placed for outcome in outcomes.values()):
        return decided, out
    return reassign_round(model, due(), beats, now, wall)


def _round(
    model: NimbusModel,
    scratch: Mapping[str, bool],
    beats: Mapping[str, Mapping[Slot, WorkerBeat]],
    now: float,
    wall: float,
    narrowed: Cluster | None = None,
) -> tuple[NimbusModel, list[Instruction], Mapping[str, Outcome]]:
    settings = model.settings
    if settings.slots_per_user is not None:
        narrowed = None  # a user's slots on untouched supervisors count against its cap
    requests = []
    prepared: dict[str, tuple[TopologyModel, set[int], Mapping[int, str]]] = {}
    ids = sorted(model.topologies) if narrowed is None else sorted(scratch)
    for tid in ids:
        topology = model.topologies[tid]
        if tid not in scratch:
            requests.append(request_of(topology, settings, reschedule=False))
            continue
        written = topology.tasks  # the ids /tasks holds
        tasks = assign_task_ids(topology.base.component_executors)
        existing = topology.assignment.task_slots if topology.assignment else {}
        cache, dead = topology.heartbeats, set()
        if not scratch[tid]:
            seen = beats.get(tid, {})
            cache = cache.observe(
                tokens_from_beats(seen, existing), now, unready_tasks(seen, existing)
            )
            dead = cache.dead_tasks(
                existing, topology.assigned_at, now, settings.task_timeout, settings.task_launch
            )
        topology = replace(topology, tasks=tasks, heartbeats=cache)
        prepared[tid] = (topology, dead, written)
        alive = None if scratch[tid] else frozenset(set(existing) - dead)
        request = request_of(topology, settings, True, alive, scratch=scratch[tid])
        requests.append(_avoiding(request, dead, existing, settings.blacklist.whole_supervisor))
    blacklist, changes = _blacklist(model, prepared, requests, now)
    cluster = _cluster(model, blacklist, narrowed)
    settled = (requests, cluster) if narrowed is None else None
    steady = not any(dead for _, dead, _ in prepared.values())
    if steady and settled is not None and model.settled == settled:
        # nothing to decide: same input, same outcome (a renumbering that could not be placed
        # too: its /tasks are written only with an assignment that uses them, so they stay)
        caches = {
            tid: replace(topology, tasks=dict(written))
            for tid, (topology, _, written) in prepared.items()
        }
        return replace(model.with_topologies(caches), blacklist=blacklist), [], {}
    outcomes = schedule_all(requests, cluster)
    broken = round_violations(requests, cluster, outcomes)
    if broken:  # a scheduler bug: write nothing rather than over-commit a supervisor; a
        # narrowed round counts as unplaced, so the round over every topology is tried
        log.error("scheduling round refused, its outcome breaks: %s", "; ".join(broken))
        refused = {tid: replace(o, placed=False) for tid, o in outcomes.items()}
        return replace(model, settled=None), [], refused
    snapshot = ClusterSnapshot.of(model)
    out: list[Instruction] = []
    logs: list[Instruction] = []
    decided: dict[str, TopologyModel] = {}
    for tid in sorted(prepared):
        topology, dead, written = prepared[tid]
        topology, more = _carry_out(
            topology, outcomes[tid], dead, written, snapshot, model.epoch, now, wall
        )
        decided[tid] = topology
        out += [i for i in more if not isinstance(i, AppendLog)]
        logs += [i for i in more if isinstance(i, AppendLog)]
    # The ZooKeeper writes first, then the log messages: each kind is carried out as one batch
    # (instruction_runner.batches), so moving many topologies costs two round trips, not two
    # each.
    out += logs
    out += [_announce(change, model.epoch) for change in changes]
    model = replace(model.with_topologies(decided), blacklist=blacklist)
    return replace(model, settled=None if out else settled), out, outcomes


def _blacklist(
    model: NimbusModel,
    prepared: Mapping[str, tuple[TopologyModel, set[int], Mapping[int, str]]],
    requests: list[TopologyRequest],
    now: float,
) -> tuple[bl.Blacklist, list[bl.Change]]:
    """This round's blacklist: the dead workers folded in (nimbus/scheduling/blacklist.py), then, as
    Storm does, supervisors released early when a topology would find no healthy slot."""
    # a supervisor that is gone is not one whose workers fail: its tasks die with it
    failures = [
        f
        for topology, dead, _ in prepared.values()
        for f in _failures(topology, dead, now)
        if f.supervisor in model.supervisors
    ]
    blacklist, changes = bl.observe(model.blacklist, model.settings.blacklist, failures, now)
    if not blacklist.listed:
        return blacklist, changes
    full = _cluster(model, bl.Blacklist())
    healthy = bl.in_service(full, blacklist)
    used = {slot for r in requests for slot in r.existing.values()}
    free = {"": sum(1 for slot in healthy.slots() if slot not in used)}
    for sid in blacklist.listed:  # releasing one frees all its blacklisted slots: their
        if sid in full.hosts:  # tasks were moved off them
            kept = healthy.hosts.get(sid, Host(())).ports
            free[sid] = len(set(full.hosts[sid].ports) - set(kept))
    needed = sum(1 for r in requests if r.reschedule and r.tasks and not _healthy_slot(r, healthy))
    blacklist, released = bl.release_for_shortage(blacklist, needed, free)
    return blacklist, changes + released


def _avoiding(
    request: TopologyRequest, dead: set[int], existing: Mapping[int, Slot], whole: bool
) -> TopologyRequest:
    """Where tasks just died, the request asks to be placed elsewhere if it can (the
    supervisor, or the slot where blacklisting goes by slot): a worker that cannot start
    there is not tried on the same broken disk again while other slots are free."""
    failed = {existing[t] for t in dead if t in existing}
    if not failed:
        return request
    return replace(request, avoid=frozenset({sid for sid, _ in failed} if whole else failed))


def _healthy_slot(request: TopologyRequest, healthy: Cluster) -> bool:
    """Whether a live task of `request` runs on a slot in service."""
    alive = request.alive
    return any(
        slot[1] in healthy.hosts.get(slot[0], Host(())).ports
        for task, slot in request.existing.items()
        if alive is None or task in alive
    )


def _failures(topology: TopologyModel, dead: set[int], now: float) -> list[bl.Failure]:
    """One failure per slot whose tasks of `topology` were declared dead this round."""
    existing = topology.assignment.task_slots if topology.assignment else {}
    by_slot: dict[Slot, list[int]] = {}
    for task in sorted(dead):  # only what nimbus assigned (or gave a grace) this term
        if task in existing and task in topology.assigned_at:
            by_slot.setdefault(existing[task], []).append(task)
    out = []
    for (sid, port), tasks in sorted(by_slot.items()):
        started = max(topology.assigned_at[t] for t in tasks)
        beat = [topology.heartbeats.beats.get(t) for t in tasks]
        never = all(b is None or b.changed_at < started for b in beat)
        what = "never started (no heartbeat)" if never else "stopped heartbeating"
        reason = f"worker of {topology.id} on port {port} {what}"
        out.append(bl.Failure(sid, port, topology.id, started, now, reason))
    return out


def _announce(change: bl.Change, epoch: int) -> AppendLog:
    values = {"supervisor": change.supervisor, "listed": change.listed, "reason": change.reason}
    return log_message("blacklist", change.supervisor, values, epoch)


def _carry_out(
    topology: TopologyModel,
    outcome: Outcome,
    dead: set[int],
    written: Mapping[int, str],
    snapshot: ClusterSnapshot,
    epoch: int,
    now: float,
    wall: float,
) -> tuple[TopologyModel, list[Instruction]]:
    """`written`: the task ids /tasks holds. Where the counts number the tasks otherwise (a
    rebalance changed a component's executors, and every component named after it moved up
    or down), /tasks is rewritten with the assignment that uses the new ids, in one
    transaction (WriteTasks), and every task restarts: each worker routes, and acks, by the
    task -> component map it read at its start, so one whose own task numbers stayed would
    otherwise go on sending to the old numbering."""
    tid, old = topology.id, topology.assignment
    existing = old.task_slots if old else {}
    placement = dict(outcome.placement)
    topology = replace(topology, sched_status=outcome.status)
    renumbered = topology.tasks != written
    # Unchanged: nothing to write, unless a dead task is restarted in place or the tasks
    # were renumbered. A topology that could not fit keeps what it had as it is, /tasks too.
    if old and existing == placement and (not outcome.placed or not (dead or renumbered)):
        return replace(topology, tasks=dict(written)), []
    # A dead task placed back on its own slot is a restart: new start time, new grace.
    moved = {t for t in placement if existing.get(t) != placement[t] or t in dead}
    restarted = set(placement) if renumbered else moved
    starts = start_times(
        placement, existing, old.task_start_secs if old else {}, int(wall), restarted
    )
    assignment = Assignment(epoch, tid, snapshot.hosts(placement), placement, starts)
    write = WriteTasks(tid, topology.tasks, assignment, epoch) if renumbered else None
    out: list[Instruction] = [write or WriteAssignment(tid, assignment, epoch)]
    out.append(log_message("assignment", tid, {"topology": tid, "moved": sorted(restarted)}, epoch))
    assigned_at = {**topology.assigned_at, **{t: now for t in restarted}}
    topology = replace(
        topology,
        assignment=assignment,
        assigned_at=assigned_at,
        heartbeats=topology.heartbeats.forget(restarted),
    )
    return topology, out
