"""How `squall.testing.run` (in_process.py) knows a run is done, or is stuck: it polls its
executors' stats to a deadline, and a task whose thread ended stops the run with its cause."""

from __future__ import annotations

import time
from collections.abc import Callable, Mapping

from squall.components import Spout
from squall.run_result import RunFailed, RunResult, RunTimeout
from squall.worker.executors import Executor


def wait_while(
    executors: Mapping[int, Executor],
    waiting: Callable[[], bool],
    deadline: float,
    what: Callable[[], str],
) -> None:
    """Poll until `waiting()` is false; a task that stopped, or the deadline, ends the run
    with `what()`, said at the deadline so it can name what was still waiting then."""
    while waiting():
        check_alive(executors)
        if time.monotonic() > deadline:
            raise RunTimeout(f"{what()} at the deadline")
        time.sleep(0.01)


def not_ready(executors: Mapping[int, Executor]) -> str:
    """The tasks still starting, by component and task id (a SparkBolt waiting on its
    SparkSession, say), so a timeout says which to look at."""
    waiting = sorted((e.context.component_id, t) for t, e in executors.items() if not e.stats.ready)
    return ", ".join(f"{component} (task {task})" for component, task in waiting) or "none"


def wait_until_done(executors: Mapping[int, Executor], deadline: float, result: RunResult) -> None:
    """Done: every spout ran dry with nothing pending, every inbox is empty, and every
    tuple sent was executed, in two looks in a row."""
    previous = None
    while True:
        now = progress(executors, result)
        if now is not None and now == previous:
            return
        previous = now
        if time.monotonic() > deadline:
            raise RunTimeout(
                f"the topology was still working at the deadline: {still_working(executors)}"
            )
        time.sleep(0.05)


def still_working(executors: Mapping[int, Executor]) -> str:
    """What kept a run from being done: spouts still emitting, tasks with queued input."""
    busy = []
    for task, e in sorted(executors.items()):
        name = f"{e.context.component_id} (task {task})"
        if not e.stats.ready:
            busy.append(f"{name} still starting")
        elif isinstance(e.component, Spout) and not e.stats.idle:
            busy.append(f"{name} still emitting")
        elif not e.inbox.empty():
            busy.append(f"{name} has queued input")
    return "; ".join(busy) or "tuples in flight between tasks"


def check_alive(executors: Mapping[int, Executor]) -> None:
    stopped = sorted({e.context.component_id for e in executors.values() if not e.running})
    if stopped:
        causes = [e.fatal.splitlines()[0] for e in executors.values() if e.fatal and not e.running]
        raise RunFailed(f"{', '.join(stopped)} could not start: {'; '.join(causes) or '?'}")


def progress(executors: Mapping[int, Executor], result: RunResult) -> tuple[int, int] | None:
    check_alive(executors)
    stats = [e.stats for e in executors.values()]
    if not all(s.ready for s in stats):
        return None
    spouts = [e for e in executors.values() if isinstance(e.component, Spout)]
    if not all(e.stats.idle for e in spouts):
        return None
    if any(not e.inbox.empty() for e in executors.values()):
        return None
    sent = sum(sum(s.transferred.values()) for s in stats)
    executed = sum(s.executed for s in stats)
    if sent != executed:
        return None
    return sent, executed
