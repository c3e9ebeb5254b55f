"""The spout task's loop: calls next_tuple while the topology is active and the tracker
allows (topology.max.spout.pending), and turns acker verdicts and timeouts, as decided by
`SpoutTracker`, into the spout's ack/fail calls."""

from __future__ import annotations

import queue
import time
from typing import Any

from squall.components import Spout

from .acking import SpoutEmitted, Tick, TreeDone, TreeFailed
from .executors import Executor, Instruction
from .spout_tracking import SpoutTracker


class SpoutExecutor(Executor):
    component: Spout
    kind = "spout"

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.tracker = SpoutTracker(
            self.context.task_id,
            self.io.ackers,
            self.timeout,
            self.conf.get("topology.max.spout.pending") or 0,
            self.new_id,
        )
        self.polls = 0  # next_tuple calls so far: `idle` says something once one ran active

    def _emitted(self, targets: tuple[int, ...], msg_id: Any) -> list[Instruction]:
        return self.tracker.handle(SpoutEmitted(msg_id, targets, time.monotonic()))

    def settle(self) -> None:
        """Hand the tracker the acker verdicts that arrived and the time; do what it says."""
        while True:
            try:
                verdict = self.inbox.get_nowait()
            except queue.Empty:
                break
            if not isinstance(verdict, TreeDone | TreeFailed):
                raise TypeError(f"a spout task takes acker verdicts, not {verdict!r}")
            for instruction in self.tracker.handle(verdict):
                self.carry_out(instruction)
        for instruction in self.tracker.handle(Tick(time.monotonic())):
            self.carry_out(instruction)
        self.stats.pending = len(self.tracker.pending)

    def loop(self) -> None:
        backoff = 0.001
        while not self.stopping.is_set():
            self.mark()
            self.settle()
            if not self.active.is_set():
                self.stats.idle = True
                self.active.wait(0.1)
                continue
            if not self.tracker.can_emit:
                time.sleep(0.001)  # backpressure: wait for acks or timeouts
                continue
            emitted = False
            self.polls += 1
            self.mark(busy=True)
            try:
                emitted = bool(self.component.next_tuple())
            except Exception:  # noqa: BLE001 - user code
                self._failed("next_tuple")
            self.stats.idle = not emitted and not self.tracker.pending
            if emitted:
                backoff = 0.001
            else:
                time.sleep(backoff)
                backoff = min(backoff * 2, 0.05)
        self.settle()
