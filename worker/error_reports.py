"""The worker's error reports on their way to ZooKeeper: each task's throttle state (the
rules are error_throttle's), kept under a lock because every executor thread reports."""

from __future__ import annotations

import threading
import time
from collections.abc import Callable
from typing import Any

from .error_throttle import ThrottleState, admit, overdue, with_note


class ErrorReports:
    def __init__(
        self,
        conf: dict[str, Any],
        write: Callable[[str, str], None],
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self.limit = conf["topology.max.error.report.per.interval"]
        self.interval = conf["topology.error.throttle.interval.secs"]
        self.write = write  # (component, text) -> the /errors node
        self.clock = clock
        self.throttles: dict[int, tuple[str, ThrottleState]] = {}
        self.lock = threading.Lock()

    def report(self, component: str, task: int, text: str, urgent: bool = False) -> None:
        """Written unless `task` used up its reports for this interval; an `urgent` one (why
        the worker exits) always is."""
        with self.lock:
            _, state = self.throttles.get(task, (component, ThrottleState()))
            state, verdict = admit(state, self.clock(), self.limit, self.interval, urgent)
            self.throttles[task] = (component, state)
        if verdict.report:
            self.write(component, with_note(text, verdict.note))

    def report_held_back(self) -> None:
        """The count of errors a throttle held back, once their interval is over and no later
        error carried it: a burst that stopped is not hidden."""
        due = []
        with self.lock:
            for task, (component, state) in self.throttles.items():
                state, text = overdue(state, self.clock(), self.interval)
                self.throttles[task] = (component, state)
                if text:
                    due.append((component, text))
        for component, text in due:
            self.write(component, text)
