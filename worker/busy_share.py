"""How busy a worker's shared thread is: the share of time it did not wait in its idle poll.

A squall worker runs its tasks on one Python thread (executor_group.py), so its receive
queues stay short while that thread is saturated (topology.max.spout.pending bounds what is
in flight): the queues' fill, Storm's load, never shows it. The thread's busy share does.
It is measured over windows of WINDOW seconds, the last complete window's share counting
(one poll that spans windows counts in the window it ends in). Time is passed in.

A worker measures over its topology.backpressure.check.millis, the interval at which it
sends its loads, so that each status carries a share of its own: over two intervals, a
peer's load-aware shuffle stepped its weights twice on every reading, and its share to a
worker with room swung further (bench/RESULTS.md, "Where a tuple's CPU goes", for the
measured figures).
"""

from __future__ import annotations

WINDOW = 0.05  # seconds per measurement: Storm's default backpressure check interval


class BusyShare:
    def __init__(self, window: float = WINDOW) -> None:
        self.window = window
        self.start: float | None = None  # when the current window began
        self.idled = 0.0  # seconds waited in the current window
        self.share = 0.0  # the last complete window's busy share, 0 to 1

    def waited(self, began: float, ended: float) -> None:
        """The thread waited from `began` to `ended`."""
        if self.start is None:
            self.start = began
        self.idled += ended - began
        self.roll(ended)

    def roll(self, now: float) -> float:
        """The busy share as of `now` (a window that ended is complete)."""
        if self.start is None:
            self.start = now
        elapsed = now - self.start
        if elapsed >= self.window:
            self.share = min(1.0, max(0.0, 1.0 - self.idled / elapsed))
            self.start, self.idled = now, 0.0
        return self.share
