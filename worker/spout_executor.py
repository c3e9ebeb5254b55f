"""The spout task's turns: calls next_tuple while the topology is active and the tracker
allows (topology.max.spout.pending), and turns acker verdicts and timeouts, as decided by
`SpoutTracker`, into the spout's ack/fail calls.

next_tuple is called in bursts (until the spout is dry, max.spout.pending is reached, a
downstream task is congested, the producer batch is full or the flush interval passed); what
the burst emitted leaves in one flush. A congested downstream task pauses the spout (Storm
2's backpressure wait strategy): it only settles acks and timeouts until the task has room,
whether acking is on or off."""

from __future__ import annotations

import time
from collections.abc import Sequence
from typing import Any

from .acking import CallAck, CallFail
from .executors import Executor, Instruction
from .spout_tracking import SpoutTracker

INACTIVE_WAIT = 0.1  # seconds between turns of an inactive spout (activation wakes it)
PENDING_WAIT = 0.001  # between turns at max.spout.pending (a verdict wakes it)
MIN_BACKOFF, MAX_BACKOFF = 0.001, 0.05  # a dry spout polls again after these, doubling


class SpoutExecutor(Executor):
    kind = "spout"

    def _init_kind(self) -> None:
        self.tracker = SpoutTracker(
            self.context.task_id,
            self.io.ackers,
            self.timeout,
            self.conf.get("topology.max.spout.pending") or 0,
            self.new_id,
            self.io.near_ackers,
        )
        self.polls = 0  # next_tuple calls so far: `idle` says something once one ran active
        # Tracked batches' sizes, so acked, failed and pending count tuples as emitted does
        # (a batch is one tree; counted in trees they showed as loss next to emitted rows)
        self.batch_rows: dict[Any, int] = {}
        self.extra_rows = 0  # the pending batches' rows beyond one per tree
        self.pause = min(self.conf.get("topology.backpressure.check.millis", 50) / 1000, 0.01)
        self.backoff = MIN_BACKOFF  # how long a dry spout waits before its next poll
        self.next_poll = 0.0
        self.stats.latency = self.tracker.latency  # summarized only when a beat reads it

    def _emitted(self, targets: tuple[int, ...], msg_id: Any) -> Sequence[Instruction]:
        return self.tracker.emitted(msg_id, targets, time.monotonic())

    def settle(self, wait: float = 0.0) -> None:
        """Hand the tracker the acker verdicts that arrived (waiting up to `wait` seconds for
        one) and the time; do what it says."""
        verdicts = self.inbox.take(1 << 30, wait)
        now = time.monotonic()
        if verdicts:
            self._call_back(self.tracker.verdicts(verdicts, now))
        self._call_back(self.tracker.tick(now))
        self.stats.pending = len(self.tracker.pending) + self.extra_rows

    def _batch_tree(self, msg_id: Any, rows: int) -> None:
        previous = self.batch_rows.get(msg_id, 1)  # a msg_id emitted again while pending
        self.batch_rows[msg_id] = rows
        self.extra_rows += rows - previous

    def _tree_rows(self, msg_id: Any) -> int:
        if not self.batch_rows:  # no batch pending: one tuple, without a dict look-up
            return 1
        rows = self.batch_rows.pop(msg_id, 1)
        self.extra_rows -= rows - 1
        return rows

    def _call_back(self, calls: Sequence[Instruction]) -> None:
        """The spout's ack and fail for the tracker's CallAck and CallFail, counted; an
        exception in either is reported and counted, as in any user call."""
        stats, spout = self.stats, self.component
        for call in calls:
            kind = type(call)
            if kind is CallAck:
                stats.acked += self._tree_rows(call[0])
                try:
                    spout.ack(call[0])
                except Exception:  # noqa: BLE001 - user code
                    self._failed("ack")
            elif kind is CallFail:
                stats.failed += self._tree_rows(call[0])
                try:
                    spout.fail(call[0])
                except Exception:  # noqa: BLE001 - user code
                    self._failed("fail")
            else:
                self.carry_out(call)

    def congested(self) -> bool:
        """Whether a task this spout emits to is full (checked before each burst)."""
        return self.io.congested(self.context.component_id)

    def burst(self) -> bool:
        """next_tuple until it is dry or a limit is reached; whether anything was emitted."""
        clock = time.monotonic
        started = clock()
        emitted_any = False
        next_tuple, tracker, interval = self.component.next_tuple, self.tracker, self.flush_interval
        self.busy, self.holding = True, 0
        for _ in range(self.batch_size):
            self.polls += 1
            self.progress_at = now = clock()  # mark(busy=True), inline
            emitted = False
            try:
                emitted = bool(next_tuple())
            except Exception:  # noqa: BLE001 - user code
                self._failed("next_tuple")
            emitted_any = emitted_any or emitted
            if not emitted or not tracker.can_emit or now - started >= interval:
                break
        self.flush()
        return emitted_any

    def turn(self) -> float:
        self.mark()
        self.settle()
        if not self.active.is_set():
            self.stats.idle = True
            return INACTIVE_WAIT  # activation wakes it sooner
        if not self.tracker.can_emit:
            return PENDING_WAIT  # max.spout.pending: a verdict wakes it sooner
        if self.congested():
            return self.pause  # backpressure: a downstream queue is full
        now = self.progress_at
        if now < self.next_poll:  # dry at the last poll: backing off
            return self.next_poll - now
        emitted = self.burst()
        self.stats.idle = not emitted and not self.tracker.pending
        if emitted:
            self.backoff = MIN_BACKOFF
            return 0.0
        self.next_poll = time.monotonic() + self.backoff
        wait, self.backoff = self.backoff, min(self.backoff * 2, MAX_BACKOFF)
        return wait

    def last_turn(self) -> None:
        self.settle()
        self.flush()
