"""What executors hand the sender (sender.py: its thread, or the worker's shared thread
that pumps it each round), and how many deliveries wait in it.

queue.Queue woke the sender for every put: while it gathers a send (up to
topology.batch.flush.interval.millis) each executor flush ran Condition.notify in Python and
handed the GIL to a thread that took one item and went back to sleep (3-7% of a worker in
two-worker profiles). Here the sender says how many deliveries it waits for, and a put wakes
it only when that many are in (or a control item came); otherwise it takes everything at once
when its gather time is up. One lock covers the items and the count that
topology.transfer.buffer.size bounds, so a put takes it once.
"""

from __future__ import annotations

import threading
import time
from collections import deque
from typing import Any

IDLE = 1  # an idle sender wakes for the first delivery


class SendQueue:
    """Items for one consumer thread from any number of producers, in put order."""

    def __init__(self, limit: int = 0) -> None:
        """`limit`: the deliveries at which `wait_for_room` holds a producer (0: never)."""
        self._items: deque[Any] = deque()
        self._lock = threading.Lock()
        self._more = threading.Condition(self._lock)  # the consumer waits here
        self._room = threading.Condition(self._lock)  # producers wait here for the limit
        self._wake_at: int | None = None  # deliveries queued that wake the waiting consumer
        self._controls = 0  # control items queued: each wakes the consumer
        self.limit = limit
        self.queued = 0  # deliveries in the outbox
        self.first_at = 0.0  # when the oldest delivery in it was put (monotonic)
        self._wake: threading.Event | None = None
        self._consumer: threading.Thread | None = None

    def wake_for_others(self, wake: threading.Event, consumer: threading.Thread) -> None:
        """The consumer is a shared thread that empties the outbox each round, waiting on
        `wake` between rounds: a put from any other thread sets it."""
        self._wake, self._consumer = wake, consumer

    def empty(self) -> bool:
        return not self._items

    def put(self, item: Any, deliveries: int = 0) -> None:
        """`item`: a list of `deliveries` deliveries, or a control item (0 deliveries)."""
        with self._lock:
            self._items.append(item)
            if deliveries:
                if not self.queued:
                    self.first_at = time.monotonic()
                self.queued += deliveries
            else:
                self._controls += 1
            wake_at = self._wake_at
            if wake_at is not None and (not deliveries or self.queued >= wake_at):
                self._wake_at = None
                self._more.notify()
        if self._wake is not None and threading.current_thread() is not self._consumer:
            self._wake.set()

    def gathering(self, enough: int, secs: float) -> float:
        """How much longer a sender that sends once `enough` deliveries are in, or once the
        oldest has waited `secs`, may gather (0 or less: send now; a control item never waits)."""
        if self._controls or self.queued >= enough:
            return 0.0
        return self.first_at + secs - time.monotonic()

    def take(self, at_least: int = IDLE, deadline: float | None = None) -> list[Any]:
        """Everything in the outbox, in order, once it holds `at_least` deliveries or a
        control item (at once if it does now), or at `deadline` (time.monotonic; None: none),
        then possibly []. Producers held at the limit go on."""
        with self._lock:
            while self.queued < at_least and not self._controls:
                timeout = None if deadline is None else deadline - time.monotonic()
                if timeout is not None and timeout <= 0:
                    break
                self._wake_at = at_least
                self._more.wait(timeout)
            self._wake_at = None
            items = list(self._items)
            self._items.clear()
            if self.limit and self.queued >= self.limit:
                self._room.notify_all()
            self.queued = self._controls = 0
            return items

    def full(self) -> bool:
        """Whether `limit` deliveries or more are queued."""
        return bool(self.limit) and self.queued >= self.limit

    def wait_for_room(self, stopping: threading.Event, closing: threading.Event) -> None:
        """Hold a producer while `limit` deliveries or more are queued, checking its stop
        flag and the consumer's every 50 ms."""
        if not self.limit:
            return
        with self._lock:
            while self.queued >= self.limit and not stopping.is_set() and not closing.is_set():
                self._room.wait(0.05)
