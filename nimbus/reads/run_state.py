"""Whether a topology's tasks really run, for the status nimbus shows: a topology whose
workers cannot start (its code does not import, its supervisor cannot fetch it, a bolt's
package is missing on the host) is ACTIVE by Storm's state machine, and showed so with zero
emitted and no word of why. Pure: the heartbeat cache and nimbus's clock are passed in.

A task runs when a beat from its assigned slot was seen since it was assigned there, and
that beat is at most `nimbus.task.timeout.secs` old (squall.liveness's rule, without the
launch grace: a task still starting is not running yet)."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

from squall.liveness import ROUNDING_SLACK_SECS, beat_is_current
from squall.nimbus.core.model import TopologyModel

FULLY_SCHEDULED = "Fully Scheduled"  # Storm's sched_status when nothing is left to place
FIRST_LINE = 300  # characters of the last error shown beside the count


@dataclass(frozen=True)
class RunCount:
    """How many of a topology's tasks run, are still starting, or are down."""

    total: int
    starting: int = 0
    down: int = 0
    waiting_secs: float = 0.0  # the longest a task not running has been assigned where it is


def run_count(
    topology: TopologyModel, now: float, task_timeout: float, launch_timeout: float
) -> RunCount:
    """A task runs while its current beat says it is ready; it is starting while it has no
    such beat and is within nimbus.task.launch.secs of its assignment; down after that."""
    placed = topology.assignment.task_slots if topology.assignment else {}
    beats = topology.heartbeats.beats
    starting = down = 0
    waiting = 0.0
    for task in topology.tasks:
        beat = beats.get(task)
        started = topology.assigned_at.get(task, float("-inf"))
        current = beat is not None and beat_is_current(beat.changed_at, started)
        if task in placed and current and beat is not None and beat.ready:
            if now - beat.changed_at <= task_timeout:
                continue
            down += 1
        elif task in placed and now - started <= launch_timeout:
            starting += 1
        else:
            down += 1
        waiting = max(waiting, now - started)
    return RunCount(len(topology.tasks), starting, down, waiting)


def run_status(sched_status: str, count: RunCount, last_error: str | None, status: str) -> str:
    """The scheduler's word, then, when tasks are not running, how many and the latest
    error's first line (`last_error`: one since they were assigned, see `recent_error`):
    what `squall list`, the UI and Storm clients show as sched_status."""
    if not (count.down or count.starting) or status.upper() == "KILLED":
        return sched_status
    parts = [sched_status] if sched_status and sched_status != FULLY_SCHEDULED else []
    if count.down:
        parts.append(f"{count.down} of {count.total} tasks not running")
    if count.starting:
        parts.append(f"{count.starting} of {count.total} tasks starting")
    if last_error:
        parts.append(f"last error: {headline(last_error)[:FIRST_LINE]}")
    return "; ".join(parts)


LAST_LINES = "its last lines:"  # how a supervisor's report of a worker's exit ends its first line
RESTARTING = "(restarting in "  # the line a supervisor adds under a failure it retries


def headline(error: str) -> str:
    """An error's line for a status: its first line, and for a worker's exit ("...; its last
    lines:") the last of those lines too, which says why (the first alone named only the
    exit code)."""
    lines = error.splitlines() or [""]
    first = lines[0]
    if not first.rstrip().endswith(LAST_LINES):
        return first
    said = [x.strip() for x in lines[1:] if x.strip() and not x.startswith(RESTARTING)]
    return f"{first.rstrip()} {said[-1]}" if said else first


SUPERVISOR = "__supervisor"  # the component a supervisor's reports are filed under
NIMBUS = "__nimbus"  # nimbus's own word on a topology (not stored: said while it holds)


def refusal_cause(refused: list[tuple[str, str]]) -> str | None:
    """Why a topology with tasks placed nowhere may lack a supervisor: nimbus refused the
    certificate of a peer (newest first in `refused`). A supervisor with such a certificate
    takes no slots, and its log alone said so."""
    if not refused:
        return None
    peer, reason = refused[0]
    more = f" (and {len(refused) - 1} more)" if len(refused) > 1 else ""
    return (
        f"nimbus refused the certificate of {peer}: {reason}{more}; a supervisor there takes "
        "no slots until it holds a certificate of this cluster's CA (squall credentials issue "
        "supervisor; see SECURITY.md)"
    )


def has_unplaced(topology: TopologyModel) -> bool:
    """Whether some task of the topology is placed in no slot."""
    placed = topology.assignment.task_slots if topology.assignment else {}
    return any(task not in placed for task in topology.tasks)


def recent_error(errors: Mapping[str, list[dict]], count: RunCount, wall_now: float) -> str | None:
    """The cause of tasks not running: the newest error reported since the longest-waiting
    of them was assigned (so no stale one from before), a component's own (an import that
    failed in initialize) before its supervisor's, which are mostly effects ("worker exited
    with code 3") and the cause only where no task said more (a code fetch that failed).
    None when every task runs or nothing was reported."""
    if not (count.down or count.starting):
        return None
    since = wall_now - count.waiting_secs - ROUNDING_SLACK_SECS  # beats carry whole seconds
    newest: dict[bool, tuple[float, str]] = {}  # by "is the supervisor's"
    for component, entries in errors.items():
        mine = component == SUPERVISOR
        for entry in entries:
            at, text = entry.get("time_secs", 0), entry.get("error", "")
            if text and at >= since and (mine not in newest or at >= newest[mine][0]):
                newest[mine] = (at, text)
    chosen = newest.get(False) or newest.get(True)
    return chosen[1] if chosen else None
