"""One of a supervisor's worker slots (ports) as a pure state machine, as Storm's Slot.java:
`step(slot, event, now) -> (slot, instructions)`, the clock passed in.

A slot's state used to be spread over five maps on three objects and two mixins, judged
inline in the sync loop; here it is one frozen value per port, and the supervisor's daemon
only turns what it saw (an exit, a beat, a download ended) into events and carries out the
instructions. The rules it keeps:

- A failed worker (an exit not asked for, no beat for supervisor.worker.timeout.secs, over
  its memory limit, a start that raised) is its topology's error and backs the slot's next
  start off (backoff.py); a worker that exits because its assignment changed, or asks to be
  restarted, is no failure.
- A worker starts with its topology's conf as nimbus has it when the start became possible
  (`since`): a conf asked for earlier may predate `squall config set`.
- A running worker whose tasks changed (or were restarted in place: a newer start) is
  stopped on the next tick, after an exit it made meanwhile has been judged (so a worker
  that stopped itself for its new assignment is not taken for a failure). As in Storm 2, a
  worker adopts no task live; one whose tasks stayed runs on when others move, and
  re-routes to them itself (worker/lifecycle.py), which is why nimbus gives a lost worker's
  tasks to free slots rather than to the survivors (nimbus/scheduling/scheduler.py).
- No worker is judged hung while ZooKeeper is away (no beat can change), and each gets a
  whole timeout from ZooKeeper's return.

STOPPING lasts from a KillWorker to the shell's Killed: the shell's kill waits for the
process, so nothing else happens between. Code and conf downloads are per topology, shared by
its slots: their jobs and retries stay with code_fetcher.py and conf_fetcher.py.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, replace
from enum import Enum
from typing import Any

from squall.liveness import is_alive
from squall.processes import WORKER_REASSIGNED, WORKER_RESTART_ASKED

from .backoff import Retry, after_failure, due
from .sync import WorkerKey, WorkerSpec


class SlotState(Enum):
    EMPTY = "empty"  # nothing assigned, no worker
    WAITING_FOR_CODE = "waiting for code"  # assigned; the topology's code is not unpacked
    WAITING_FOR_CONF = "waiting for conf"  # code ready; no conf asked for since `since`
    STARTING = "starting"  # a worker was started and has not beaten since
    RUNNING = "running"  # its worker's beat changed since it started
    BACKING_OFF = "backing off"  # the last worker failed; no start before retry.not_before
    STOPPING = "stopping"  # its worker is being killed


WITH_WORKER = (SlotState.STARTING, SlotState.RUNNING)


@dataclass(frozen=True)
class Timeouts:
    """supervisor.worker.timeout.secs and supervisor.worker.start.timeout.secs."""

    worker: float
    start: float


@dataclass(frozen=True)
class Slot:
    port: int
    timeouts: Timeouts
    state: SlotState = SlotState.EMPTY
    desired: WorkerSpec | None = None  # what the accepted assignments want on this port
    worker: WorkerSpec | None = None  # what its worker was started from (while it has one)
    started_at: float = 0.0  # when its worker started (monotonic)
    since: float = 0.0  # WAITING_FOR_CONF: when the start became possible
    retry: Retry | None = None  # failures in a row of this topology's workers here
    beat: tuple[int, float] | None = None  # last seq seen, when it changed (our clock)


# --- events: what the shell saw ---


@dataclass(frozen=True)
class Assigned:
    """The accepted assignments' worker for this port (None: none)."""

    spec: WorkerSpec | None


@dataclass(frozen=True)
class CodeReady:
    """The desired topology's code is unpacked."""


@dataclass(frozen=True)
class ConfFetched:
    """The desired topology's newest conf, and when its download was asked for."""

    began: float
    conf: Mapping[str, Any]


@dataclass(frozen=True)
class StartFailed:
    error: str


@dataclass(frozen=True)
class BeatSeen:
    seq: int


@dataclass(frozen=True)
class Exited:
    """The worker ended on its own: its exit code, how long it ran, and its description
    (the code and its last lines)."""

    returncode: int
    ran_for: float
    text: str


@dataclass(frozen=True)
class OverMemory:
    text: str


@dataclass(frozen=True)
class Tick:
    """Each sync: whether ZooKeeper is away, and when it last came back."""

    zookeeper_away: bool = False
    zookeeper_back: float = float("-inf")


@dataclass(frozen=True)
class Killed:
    """The worker a KillWorker named has ended."""


Event = (
    Assigned
    | CodeReady
    | ConfFetched
    | StartFailed
    | BeatSeen
    | Exited
    | OverMemory
    | Tick
    | Killed
)


# --- instructions: what the shell does ---


@dataclass(frozen=True)
class FetchCode:
    """Download and unpack the topology's code unless ready, in flight or backing off."""

    topology_id: str


@dataclass(frozen=True)
class FetchConf:
    """Download the topology's conf unless a download is in flight or backing off."""

    topology_id: str


@dataclass(frozen=True)
class StartWorker:
    spec: WorkerSpec
    conf: Mapping[str, Any]


@dataclass(frozen=True)
class KillWorker:
    """Stop the worker (SIGTERM, SIGKILL after `grace` seconds) and answer Killed."""

    key: WorkerKey
    grace: float


@dataclass(frozen=True)
class ReportError:
    """The topology's error, unless the topology is gone."""

    topology_id: str
    port: int | None
    text: str


@dataclass(frozen=True)
class Log:
    level: int
    text: str


@dataclass(frozen=True)
class RemoveCode:
    """Remove the topology's code folder (from `code_to_remove`, over all slots)."""

    topology_id: str


Instruction = FetchCode | FetchConf | StartWorker | KillWorker | ReportError | Log
Result = tuple[Slot, list[Instruction]]


def empty_slot(port: int, timeouts: Timeouts) -> Slot:
    return Slot(port, timeouts)


def step(slot: Slot, event: Event, now: float) -> Result:
    """The slot after `event` at `now`, and what the shell must do. Exhaustive: an event of
    an unknown type raises TypeError."""
    match event:
        case Assigned():
            return _assigned(slot, event.spec, now)
        case CodeReady():
            if slot.state is not SlotState.WAITING_FOR_CODE or slot.desired is None:
                return slot, []
            waiting = replace(slot, state=SlotState.WAITING_FOR_CONF, since=now)
            return waiting, [FetchConf(slot.desired.topology_id)]
        case ConfFetched():
            return _conf_fetched(slot, event, now)
        case StartFailed():
            if slot.state is not SlotState.STARTING or slot.worker is None:
                return slot, []
            text = f"cannot start worker {slot.worker.topology_id}:{slot.port}: {event.error}"
            return _ended_failed(slot, slot.worker, now, text, 0.0, Log(logging.WARNING, text))
        case BeatSeen():
            return _beat(slot, event.seq, now), []
        case Exited():
            return _exited(slot, event, now)
        case OverMemory():
            if slot.state not in WITH_WORKER or slot.worker is None:
                return slot, []
            text = f"worker {slot.worker.topology_id}:{slot.port}: {event.text}"
            return _kill_failed(slot, slot.worker, now, 0, event.text, Log(logging.WARNING, text))
        case Tick():
            return _tick(slot, event, now)
        case Killed():
            if slot.state is not SlotState.STOPPING:
                return slot, []
            return _idle(replace(slot, worker=None), now)
    raise TypeError(f"not a slot event: {event!r}")


def _assigned(slot: Slot, spec: WorkerSpec | None, now: float) -> Result:
    """Record what is wanted. A slot with a worker keeps it until the next tick; a slot
    waiting for the same topology goes on waiting; any other starts over. The back-off
    belongs to the topology: another topology here starts without it."""
    same_topology = _tid(slot.desired) == _tid(spec) and spec is not None
    slot = replace(slot, desired=spec, retry=slot.retry if same_topology else None)
    if slot.state in (*WITH_WORKER, SlotState.STOPPING):
        return slot, []
    waiting = (SlotState.WAITING_FOR_CODE, SlotState.WAITING_FOR_CONF)
    if slot.state in waiting and same_topology:
        return slot, []
    return _idle(slot, now)


def _conf_fetched(slot: Slot, event: ConfFetched, now: float) -> Result:
    """Start the worker once a conf asked for no earlier than `since` is in."""
    if slot.state is not SlotState.WAITING_FOR_CONF or slot.desired is None:
        return slot, []
    if event.began < slot.since:
        return slot, []  # maybe from before a `squall config set`: the next tick asks again
    starting = replace(
        slot, state=SlotState.STARTING, worker=slot.desired, started_at=now, since=0.0
    )
    return starting, [StartWorker(slot.desired, event.conf)]


def _beat(slot: Slot, seq: int, now: float) -> Slot:
    """A beat counts when its seq changed (timed on our clock, never the worker's): the
    seq is kept across the slot's workers, so an earlier incarnation's last beat is no
    change, and the first change since a start makes the worker RUNNING."""
    if slot.state not in WITH_WORKER or (slot.beat is not None and slot.beat[0] == seq):
        return slot
    return replace(slot, beat=(seq, now), state=SlotState.RUNNING)


def _exited(slot: Slot, event: Exited, now: float) -> Result:
    """A worker that exited because what it ran was taken from it (WORKER_REASSIGNED, or 0
    from a worker of an older version) and this supervisor accepted that change too, or that
    asked to be restarted, did not fail. One that exits so while still wanted as it was
    started (an assignment not accepted here, yet or ever) backs off without an error, so
    it cannot loop. Any other exit is a failure."""
    if slot.state not in WITH_WORKER or slot.worker is None:
        return slot, []
    worker = slot.worker
    where = f"worker {worker.topology_id}:{slot.port}"
    ended = replace(slot, worker=None)
    changed = slot.desired is None or slot.desired.identity != worker.identity
    if event.returncode in (0, WORKER_REASSIGNED) and changed:
        ended, out = _idle(ended, now)
        return ended, [Log(logging.INFO, f"{where} stopped: its assignment changed"), *out]
    if event.returncode == WORKER_RESTART_ASKED:
        ended, out = _idle(ended, now)
        return ended, [Log(logging.INFO, f"{where} restarting on request"), *out]
    if event.returncode == WORKER_REASSIGNED:
        note = Log(logging.INFO, f"{where} stopped for an assignment not taken here")
        ended, out = _idle(replace(ended, retry=after_failure(slot.retry, now, event.ran_for)), now)
        return ended, [note, *out]
    note = Log(logging.WARNING, event.text)
    return _ended_failed(slot, worker, now, event.text, event.ran_for, note)


def _tick(slot: Slot, tick: Tick, now: float) -> Result:
    """Stop a worker no longer wanted as it was started, or hung; start a slot whose
    back-off has passed; ask again for what a waiting slot waits for."""
    desired, worker = slot.desired, slot.worker
    if slot.state in WITH_WORKER and worker is not None:
        if desired is None or desired.identity != worker.identity:
            key = (worker.topology_id, slot.port)
            return replace(slot, state=SlotState.STOPPING), [KillWorker(key, 5)]
        if not tick.zookeeper_away and _hung(slot, tick.zookeeper_back, now):
            where = f"worker {worker.topology_id}:{slot.port}"
            note = Log(logging.WARNING, f"{where} stopped heartbeating; restarting it")
            text = f"{where} stopped heartbeating; restarted"
            return _kill_failed(slot, worker, now, 1, text, note)
        return slot, []
    if slot.state is SlotState.BACKING_OFF:
        return _idle(slot, now)
    if slot.state is SlotState.WAITING_FOR_CODE and desired is not None:
        return slot, [FetchCode(desired.topology_id)]
    if slot.state is SlotState.WAITING_FOR_CONF and desired is not None:
        return slot, [FetchConf(desired.topology_id)]
    return slot, []


def _hung(slot: Slot, zookeeper_back: float, now: float) -> bool:
    """Past its start-up grace with no beat change within the timeout since it started
    (a beat from an earlier incarnation does not count), nor since ZooKeeper came back."""
    seen = slot.beat[1] if slot.beat is not None else float("-inf")
    last = max(seen, zookeeper_back)  # is_alive ignores one from before the start
    timeouts = slot.timeouts
    return not is_alive(slot.started_at, last, now, timeouts.worker, timeouts.start)


def _kill_failed(
    slot: Slot, worker: WorkerSpec, now: float, grace: float, text: str, note: Log
) -> Result:
    """Kill the slot's worker as failed: its error and back-off, then STOPPING."""
    kill = KillWorker((worker.topology_id, slot.port), grace)
    failed, report = _failure(slot, worker, now, text, 0.0)
    return replace(failed, state=SlotState.STOPPING), [note, kill, report]


def _ended_failed(
    slot: Slot, worker: WorkerSpec, now: float, text: str, ran_for: float, note: Log
) -> Result:
    """The slot's worker ended (or never started) as a failure: its error, then the slot
    idles."""
    failed, report = _failure(slot, worker, now, text, ran_for)
    idle, out = _idle(replace(failed, worker=None), now)
    return idle, [note, report, *out]


def _failure(
    slot: Slot, worker: WorkerSpec, now: float, text: str, ran_for: float
) -> tuple[Slot, ReportError]:
    """A failure of the slot's worker: its topology's error says when the slot starts
    again. The slot backs off only if it still wants that topology."""
    tid = worker.topology_id
    retry = after_failure(slot.retry, now, ran_for)
    report = ReportError(tid, slot.port, f"{text}\n(restarting in {retry.not_before - now:.0f}s)")
    return replace(slot, retry=retry if _tid(slot.desired) == tid else slot.retry), report


def _idle(slot: Slot, now: float) -> Result:
    """A slot without a worker: empty, backing off, or waiting for its code."""
    if slot.desired is None:
        return replace(
            slot, state=SlotState.EMPTY, retry=None, since=0.0, started_at=0.0, beat=None
        ), []
    if not due(slot.retry, now):
        return replace(slot, state=SlotState.BACKING_OFF, since=0.0), []
    waiting = replace(slot, state=SlotState.WAITING_FOR_CODE, since=0.0)
    return waiting, [FetchCode(slot.desired.topology_id)]


def _tid(spec: WorkerSpec | None) -> str | None:
    return spec.topology_id if spec is not None else None


def worker_key(slot: Slot) -> WorkerKey | None:
    """The (topology, port) of the slot's worker while it has one running."""
    if slot.state not in WITH_WORKER or slot.worker is None:
        return None
    return slot.worker.topology_id, slot.port


def code_to_remove(
    slots: Iterable[Slot], present: Iterable[str], busy: Callable[[str], bool]
) -> list[RemoveCode]:
    """The code folders no slot wants or runs, and no download is writing."""
    used = {_tid(s.desired) for s in slots} | {_tid(s.worker) for s in slots}
    return [RemoveCode(t) for t in sorted(set(present) - used) if not busy(t)]


def retries(slots: Iterable[Slot]) -> list[Retry]:
    """The slots' back-offs, for when the loop wakes next."""
    return [s.retry for s in slots if s.retry is not None]
