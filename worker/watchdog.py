"""The worker's watchdog: the shell around stall.py, run from the heartbeat loop.

It reads each executor's progress and thread, and names the first reason the worker must
exit: a task that ended as fatal (its SparkSession failed, its initialize raised) or one
stalled beyond topology.executor.stall.secs. It reports that reason (never throttled) and
the worker exits non-zero so its supervisor restarts it.
"""

from __future__ import annotations

import sys
import sysconfig
import threading
from collections.abc import Callable, Mapping
from pathlib import Path

import squall

from .executors import Executor
from .stall import Frame, stall_message, stalled_for, stuck_at

# Code a user cannot fix where a thread waits: the stdlib, installed packages, squall itself.
_LIBRARY_ROOTS = tuple(
    {
        *(sysconfig.get_paths()[k] for k in ("stdlib", "platstdlib", "purelib", "platlib")),
        str(Path(squall.__file__).parent),
        str(Path(__file__).parent),
    }
)


def in_library(filename: str) -> bool:
    return filename.startswith(_LIBRARY_ROOTS) or filename.startswith("<")


def thread_frames(thread: threading.Thread) -> list[Frame]:
    """The frames `thread` is in now, outermost first (empty when it is not running)."""
    frame = sys._current_frames().get(thread.ident) if thread.ident is not None else None
    frames: list[Frame] = []
    while frame is not None and len(frames) < 200:
        code = frame.f_code
        frames.append(Frame(code.co_filename, frame.f_lineno, code.co_name))
        frame = frame.f_back
    return frames[::-1]


class Watchdog:
    def __init__(
        self,
        executors: Mapping[int, Executor],
        stall_secs: float,
        report: Callable[[str, int, str], None],
    ) -> None:
        self.executors = executors
        self.stall_secs = stall_secs
        self.report = report  # (component, task, text), written without throttling

    def check(self, now: float) -> str | None:
        """The reason the worker must exit now, reported; None while every task is live."""
        stalled = []
        for task, executor in sorted(self.executors.items()):
            component = executor.context.component_id
            if executor.fatal is not None and not executor.running:
                self.report(component, task, executor.fatal)
                return executor.fatal
            progress = executor.progress()
            quiet = stalled_for(progress, now, self.stall_secs)
            if quiet is not None:
                stalled.append((not progress.busy, task, executor, progress, quiet))
        if not stalled:
            return None
        # the one inside a call first: tasks sharing its thread (executor_group.py) only wait
        _, task, executor, progress, quiet = min(stalled, key=lambda s: s[:2])
        component = executor.context.component_id
        where = stuck_at(thread_frames(executor.thread), in_library)
        text = stall_message(executor.kind, component, task, quiet, progress.waiting, where)
        self.report(component, task, text)
        return text
