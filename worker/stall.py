"""When an executor counts as stalled, and how the stall is told.

An executor thread that is healthy comes back to its loop at least every half second (every
wait on its inbox is bounded), so one that has not marked progress for
topology.executor.stall.secs while it holds taken input, or while input waits in its inbox,
is stuck in user code, in Spark or in a bug: tuples would replay forever while the topology
looks ACTIVE. The worker shell reads each executor's `Progress`, asks `stalled_for`, and on a
stall reports `stall_message` and exits so the supervisor restarts it.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass


@dataclass(frozen=True)
class Progress:
    """What the watchdog reads of one executor: when it last made progress (monotonic
    seconds), whether it is inside a call (an input taken, a Spark start, next_tuple), and how
    many inputs wait in its inbox or in its hands."""

    last: float
    busy: bool
    waiting: int


@dataclass(frozen=True)
class Frame:
    filename: str
    lineno: int
    name: str

    def line(self) -> str:
        return f"{self.filename}:{self.lineno} in {self.name}"


def stalled_for(progress: Progress, now: float, timeout: float) -> float | None:
    """Seconds without progress when that is beyond `timeout` with input waiting (or a call
    under way), else None: an idle executor with nothing to do never stalls."""
    quiet = now - progress.last
    if (progress.busy or progress.waiting > 0) and quiet > timeout:
        return quiet
    return None


def stuck_at(frames: Sequence[Frame], in_library: Callable[[str], bool]) -> str:
    """Where a thread is, in one line: its innermost frame, and when that is library code
    (threading's wait, socket reads) also the innermost frame of the caller's own code, which
    is the one a user can fix. `frames` run outermost first."""
    if not frames:
        return "unknown"
    top = frames[-1]
    if not in_library(top.filename):
        return top.line()
    own = next((f for f in reversed(frames) if not in_library(f.filename)), None)
    if own is None:
        return top.line()
    return f"{own.line()} (waiting in {top.line()})"


def stall_message(
    kind: str, component: str, task: int, quiet: float, waiting: int, where: str
) -> str:
    return (
        f"{kind} {component} task {task} made no progress for {quiet:.0f} s "
        f"with {waiting} tuples waiting; stuck at {where}"
    )
