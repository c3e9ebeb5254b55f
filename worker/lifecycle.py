"""A worker's life cycle as a pure machine: `step(state, event, now) -> (state, instructions)`,
the clock passed in, as nimbus/core/decide.py and supervisor/slot.py.

The rules it keeps (zk_reactions.py is its shell: it turns ZooKeeper's watches and the
worker's rounds into events and carries out the instructions):

- Spouts emit while the topology is active and, from the first time every task of it is
  ready (readiness.py says why), ready: SetEmitting(True) is never given otherwise.
- A new assignment re-routes the worker to the other tasks' addresses, live: tasks that
  moved elsewhere (a lost host's, to new workers) cost this worker nothing. One that changes
  this worker's own tasks, restarts them in place (a newer start time: a rebalance that
  renumbered the tasks, or a dead task restarted on this slot), or is none (the topology
  went), makes it exit (WORKER_REASSIGNED) so that its supervisor, which compares the same
  two things (supervisor/slot.py), starts what is wanted now. So do the topology's record
  going, a supervisor that died (WORKER_ORPHANED), a task the watchdog found stalled
  (WORKER_UNHEALTHY) and Storm's JVM_RESTART (WORKER_RESTART_ASKED). A worker exits once:
  after Exit, nothing.
- A heartbeat is written every worker.heartbeat.frequency.secs, and at once when one of its
  tasks became ready (the others' spouts wait for it).
- A round without ZooKeeper is skipped, not fatal: the next round is a heartbeat period
  later (no quicker looks, nor warnings, while it is away) and beats again.
"""

from __future__ import annotations

import logging
from collections.abc import Mapping
from dataclasses import dataclass, field, replace

from squall.processes import (
    WORKER_ORPHANED,
    WORKER_REASSIGNED,
    WORKER_RESTART_ASKED,
    WORKER_UNHEALTHY,
)
from squall.records import Assignment, Slot, WorkerBeat
from squall.zk.layout import ZkLayout

from .readiness import ready_tasks, round_wait, summary, waiting_for

WAITING_LOG_SECS = 10.0  # how often a worker says what its spouts wait for


@dataclass(frozen=True)
class Lifecycle:
    slot: Slot
    my_tasks: tuple[int, ...]  # the tasks this worker runs: fixed for its life
    my_start: int  # their newest start time (nimbus's): a newer one restarts them here
    beat_period: float  # worker.heartbeat.frequency.secs
    components: Mapping[int, str] = field(default_factory=dict)  # each task's, for the logs
    active: bool = False  # the topology's status, as last read
    ready: bool = False  # every task of the topology has been ready (latched)
    topology_tasks: tuple[int, ...] = ()
    topology_beats: Mapping[int, str] = field(default_factory=dict)  # each task's beat node
    topology_workers: int = 1
    beat_due: float = 0.0  # when the next heartbeat is written, whatever changes
    beaten_ready: frozenset[int] = frozenset()  # this worker's ready tasks, as last beaten
    waiting_logged: float = float("-inf")
    zookeeper_away: bool = False  # the last round could not reach ZooKeeper
    exit_code: int | None = None  # set once: the worker is exiting


# --- events: what the shell saw ---


@dataclass(frozen=True)
class StatusRead:
    """The topology's /storms record: its status is active or not (None: the record is gone)."""

    active: bool | None


@dataclass(frozen=True)
class AssignmentRead:
    """A trusted assignment newer than the last (None: it is gone)."""

    assignment: Assignment | None


@dataclass(frozen=True)
class BeatsRead:
    """Every worker's latest heartbeat of the topology, by heartbeat node name."""

    beats: Mapping[str, WorkerBeat]


@dataclass(frozen=True)
class Tick:
    """A round is due; `ready_here`: this worker's tasks that say they are ready."""

    ready_here: frozenset[int]


@dataclass(frozen=True)
class Beaten:
    """The heartbeat that a Beat asked for was written."""

    ready_here: frozenset[int]


@dataclass(frozen=True)
class ZooKeeperAway:
    """A round's ZooKeeper call failed for want of ZooKeeper: the rest of the round is skipped."""


@dataclass(frozen=True)
class ZooKeeperBack:
    """A round's ZooKeeper calls all went through."""


@dataclass(frozen=True)
class SupervisorGone:
    """The supervisor that started this worker (`pid`) died: the worker is an orphan."""

    pid: int


@dataclass(frozen=True)
class Unhealthy:
    """The watchdog found a task stalled or ended as fatal."""

    reason: str


@dataclass(frozen=True)
class RestartAsked:
    """Storm's JVM_RESTART profiler action."""


Event = (
    StatusRead
    | AssignmentRead
    | BeatsRead
    | Tick
    | Beaten
    | ZooKeeperAway
    | ZooKeeperBack
    | SupervisorGone
    | Unhealthy
    | RestartAsked
)


# --- instructions: what the shell does ---


@dataclass(frozen=True)
class SetEmitting:
    """Let this worker's spouts emit, or stop them."""

    emit: bool


@dataclass(frozen=True)
class Route:
    """Send to each task at its address; `host`: this worker's own host (for locality)."""

    addresses: Mapping[int, tuple[str, int]]
    host: str


@dataclass(frozen=True)
class Beat:
    """Write this worker's heartbeat (then step Beaten with the same `ready_here`)."""

    ready_here: frozenset[int]


@dataclass(frozen=True)
class RecheckAssignment:
    """Judge an assignment change that the watch could not (zk_agent.py)."""


@dataclass(frozen=True)
class ReadBeats:
    """Read every worker's heartbeat (then step BeatsRead)."""


@dataclass(frozen=True)
class WriteErrors:
    """Write the tasks' held-back and pending error reports (error_reports.py)."""


@dataclass(frozen=True)
class Say:
    """Log a line at `level` (logging's)."""

    text: str
    level: int = logging.INFO


@dataclass(frozen=True)
class Exit:
    """Stop the worker with this exit code (squall/processes.py)."""

    code: int


Instruction = SetEmitting | Route | Beat | RecheckAssignment | ReadBeats | WriteErrors | Say | Exit
Result = tuple[Lifecycle, list[Instruction]]


def begin(
    slot: Slot, assignment: Assignment, beat_period: float, components: Mapping[int, str]
) -> Lifecycle:
    """A worker's machine from the assignment it started with (its tasks are those on `slot`)."""
    tasks = tuple(assignment.tasks_on(slot))
    start = _newest_start(assignment, tasks)
    return _noted(
        Lifecycle(slot, tasks, start, beat_period, dict(components)),
        assignment,
    )


def step(state: Lifecycle, event: Event, now: float) -> Result:
    if state.exit_code is not None:  # exiting: nothing more to do
        return state, []
    match event:
        case StatusRead(active=None):
            return _exit(state, WORKER_REASSIGNED, "the topology is gone; exiting")
        case StatusRead(active=bool(active)):
            state = replace(state, active=active)
            return state, [SetEmitting(state.active and state.ready)]
        case AssignmentRead(assignment=None):
            return _exit(state, WORKER_REASSIGNED, "the topology's assignment is gone; exiting")
        case AssignmentRead(assignment=Assignment() as assignment):
            return _assigned(state, assignment)
        case BeatsRead():
            return _beats_read(state, event.beats, now)
        case Tick():
            return _tick(state, event.ready_here, now)
        case Beaten():
            return replace(
                state, beat_due=now + state.beat_period, beaten_ready=event.ready_here
            ), []
        case ZooKeeperAway():
            return replace(state, zookeeper_away=True), []
        case ZooKeeperBack():
            return replace(state, zookeeper_away=False), []
        case SupervisorGone():
            text = f"its supervisor (pid {event.pid}) is gone: exiting"
            return _exit(state, WORKER_ORPHANED, text, logging.ERROR)
        case Unhealthy():
            text = f"exiting so the supervisor restarts this worker: {event.reason}"
            return _exit(state, WORKER_UNHEALTHY, text, logging.ERROR)
        case RestartAsked():
            text = "restarting on request (JVM_RESTART)"
            return _exit(state, WORKER_RESTART_ASKED, text, logging.WARNING)
    raise TypeError(f"not a worker lifecycle event: {event!r}")


def next_round(state: Lifecycle) -> float:
    """Seconds until the worker's next round (readiness.py says how often)."""
    if state.zookeeper_away:
        return state.beat_period
    return round_wait(state.ready, state.topology_workers, state.beat_period)


def routes(slot: Slot, assignment: Assignment) -> Route:
    """Every task's address in `assignment`, and the host of `slot`."""
    addresses = {
        task: (assignment.node_host.get(node, node), port)
        for task, (node, port) in assignment.task_slots.items()
    }
    return Route(addresses, assignment.node_host.get(slot[0], slot[0]))


def _assigned(state: Lifecycle, assignment: Assignment) -> Result:
    if tuple(assignment.tasks_on(state.slot)) != state.my_tasks:
        text = "this worker's tasks changed; exiting so the supervisor restarts it"
        return _exit(state, WORKER_REASSIGNED, text)
    if _newest_start(assignment, state.my_tasks) != state.my_start:
        text = "this worker's tasks were restarted in place; exiting so the supervisor restarts it"
        return _exit(state, WORKER_REASSIGNED, text)
    return _noted(state, assignment), [routes(state.slot, assignment)]


def _newest_start(assignment: Assignment, tasks: tuple[int, ...]) -> int:
    """As the supervisor's WorkerSpec.started (supervisor/sync.py): nimbus bumps it when it
    restarts a task in place."""
    return max((assignment.task_start_secs.get(t, 0) for t in tasks), default=0)


def _noted(state: Lifecycle, assignment: Assignment) -> Lifecycle:
    return replace(
        state,
        topology_tasks=tuple(assignment.task_slots),
        topology_beats={
            task: ZkLayout.beat_name(node, port)
            for task, (node, port) in assignment.task_slots.items()
        },
        topology_workers=len(set(assignment.task_slots.values())),
    )


def _beats_read(state: Lifecycle, beats: Mapping[str, WorkerBeat], now: float) -> Result:
    if state.ready:
        return state, []
    waiting = waiting_for(state.topology_tasks, ready_tasks(beats, state.topology_beats))
    if not waiting:
        state = replace(state, ready=True)
        return state, [
            Say("every task of the topology is ready; spouts may emit"),
            SetEmitting(state.active),
        ]
    if now - state.waiting_logged > WAITING_LOG_SECS:
        text = f"spouts wait for {summary(waiting, state.components)} to be ready"
        return replace(state, waiting_logged=now), [Say(text)]
    return state, []


def _tick(state: Lifecycle, ready_here: frozenset[int], now: float) -> Result:
    instructions: list[Instruction] = []
    if now >= state.beat_due or ready_here != state.beaten_ready:
        instructions.append(Beat(ready_here))
    instructions.append(RecheckAssignment())
    if not state.ready:
        instructions.append(ReadBeats())
    instructions.append(WriteErrors())
    return state, instructions


def _exit(state: Lifecycle, code: int, text: str, level: int = logging.INFO) -> Result:
    return replace(state, exit_code=code), [Say(text, level), Exit(code)]
