"""One topology's placement decision: which tasks are dead, where every task runs, and
whether anything needs writing at all. Pure: the snapshot, beats and clocks come in."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import replace

from squall.records import Assignment, Slot, WorkerBeat
from squall.structure import assign_task_ids

from .heartbeats import tokens_from_beats
from .instructions import AppendLog, Instruction, WriteAssignment, WriteTasks
from .model import ClusterSnapshot, NimbusSettings, TopologyModel
from .scheduler import schedule, start_times


def log_message(type_: str, key: str, values: Mapping, epoch: int) -> AppendLog:
    """Every coordinator-log message carries the epoch, so replay can ignore a deposed
    leader's late writes (store.topology_confs)."""
    return AppendLog(type_, key, {**values, "epoch": epoch}, epoch)


def reassign(
    topology: TopologyModel,
    snapshot: ClusterSnapshot,
    settings: NimbusSettings,
    epoch: int,
    scratch: bool,
    beats: Mapping[Slot, WorkerBeat],
    now: float,
    wall: float,
) -> tuple[TopologyModel, list[Instruction]]:
    """Scratch (a rebalance) places every task afresh; otherwise live tasks stay put and
    dead ones move. An unchanged placement with no dead task writes nothing."""
    tid, base = topology.id, topology.base
    out: list[Instruction] = []
    tasks = assign_task_ids(base.component_executors)
    if tasks != topology.tasks:
        out.append(WriteTasks(tid, tasks, epoch))
    old = topology.assignment
    existing = old.task_slots if old else {}
    slots = snapshot.free_slots(tid)
    cache = topology.heartbeats
    dead: set[int] = set()
    if scratch:
        placement = schedule(tasks, slots, base.num_workers)
    else:
        cache = cache.observe(tokens_from_beats(beats, existing), now)
        dead = cache.dead_tasks(
            existing, topology.assigned_at, now, settings.task_timeout, settings.task_launch
        )
        placement = schedule(tasks, slots, base.num_workers, existing, set(existing) - dead)
    topology = replace(topology, tasks=tasks, heartbeats=cache)
    if old and old.task_slots == placement and not dead:
        return topology, out
    # A dead task placed back on its own slot is a restart: new start time, new grace.
    restarted = {t for t in placement if existing.get(t) != placement[t] or t in dead}
    kept = {t: s for t, s in existing.items() if t not in restarted}
    starts = start_times(placement, kept, old.task_start_secs if old else {}, int(wall))
    assignment = Assignment(epoch, tid, snapshot.hosts(placement), placement, starts)
    out.append(WriteAssignment(tid, assignment, epoch))
    out.append(log_message("assignment", tid, {"topology": tid, "moved": sorted(restarted)}, epoch))
    assigned_at = {**topology.assigned_at, **{t: now for t in restarted}}
    topology = replace(
        topology,
        assignment=assignment,
        assigned_at=assigned_at,
        heartbeats=cache.forget(restarted),
    )
    return topology, out
