"""The worker's error reports on their way to ZooKeeper: each task's throttle state (the
rules are error_throttle's), kept under a lock because every executor thread reports.

A report only queues; the worker's main thread writes the queue in its ZooKeeper round
(`write_pending`). A task that wrote its own reports froze while ZooKeeper was suspended
(kazoo queues the request until it is back: with a shared thread, every task of the worker
froze), and failed fatally, naming ConnectionLoss instead of its own error, once the session
expired. The queue keeps the newest MAX_PENDING reports through an outage.
"""

from __future__ import annotations

import threading
import time
from collections import deque
from collections.abc import Callable
from typing import Any

from .error_throttle import ThrottleState, admit, overdue, with_note

MAX_PENDING = 256  # reports waiting for ZooKeeper; older ones go first when it is away long


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
        self.pending: deque[tuple[str, str]] = deque(maxlen=MAX_PENDING)
        self.lock = threading.Lock()

    def report(self, component: str, task: int, text: str, urgent: bool = False) -> None:
        """Queued unless `task` used up its reports for this interval; an `urgent` one (why
        the worker exits) always is."""
        with self.lock:
            _, state = self.throttles.get(task, (component, ThrottleState()))
            state, verdict = admit(state, self.clock(), self.limit, self.interval, urgent, text)
            self.throttles[task] = (component, state)
            if verdict.report:
                self.pending.append((component, with_note(text, verdict.note)))

    def report_held_back(self) -> None:
        """The count of errors a throttle held back, once their interval is over and no later
        error carried it: a burst that stopped is not hidden."""
        with self.lock:
            for task, (component, state) in self.throttles.items():
                state, text = overdue(state, self.clock(), self.interval)
                self.throttles[task] = (component, state)
                if text:
                    self.pending.append((component, text))

    def write_pending(self) -> None:
        """Write the queued reports, oldest first (on the worker's main thread). What `write`
        raises while ZooKeeper is away leaves that report and the later ones queued."""
        while True:
            with self.lock:
                if not self.pending:
                    return
                component, text = self.pending[0]
            self.write(component, text)
            with self.lock:
                if self.pending and self.pending[0] == (component, text):
                    self.pending.popleft()
