"""One executor's receive queue (Storm 2's JCQueue, for CPython): the executor takes every
waiting input in one wake-up, not one per lock round trip, and senders put whole lists.

Data (tuples, tables) and protocol messages (acks, inits, verdicts) wait apart: protocol
messages are served first and never count against the bound, so a full queue can always
drain its acks and a DAG of full queues cannot deadlock. The bound on data is enforced by
the senders (they wait for `has_room`, backpressure.py says when), not by `put_many`: the
transport's receiving thread (shared or its own) must never block on a queue.
"""

from __future__ import annotations

import threading
from collections import deque
from collections.abc import Callable, Iterable
from typing import Any


class ReceiveQueue:
    def __init__(
        self,
        capacity: int,
        weight: Callable[[Any], int] | None = None,
        weighed: type | None = None,
        wake: threading.Event | None = None,
    ) -> None:
        """`capacity`: data rows the queue holds before it counts as full; `weight`: the rows
        of one data item (a table is its row count), 1 each when None; `weighed`: the one
        type `weight` is asked about, every other item being 1 row (no call per tuple);
        `wake`: set by every arrival (what the executor waits on between its turns)."""
        self.capacity = capacity
        self._weight = weight
        self._weighed = weighed
        self._data: deque[Any] = deque()
        self._protocol: deque[Any] = deque()
        self._rows = 0  # data rows queued
        self._ready = threading.Condition(threading.Lock())
        self.wake = wake

    # --- senders ---

    def put_many(self, items: Iterable[Any], protocol: bool = False) -> None:
        """Append `items` in order; never blocks (the sender decides whether to wait)."""
        items = list(items)
        if not items:
            return
        with self._ready:
            if protocol:
                self._protocol.extend(items)
            else:
                self._data.extend(items)
                self._rows += self._rows_of(items)
            self._ready.notify_all()
        if self.wake is not None:
            self.wake.set()

    def put(self, item: Any, protocol: bool = False) -> None:
        self.put_many((item,), protocol)

    def has_room(self) -> bool:
        return self._rows < self.capacity

    def fill(self) -> float:
        """The data rows queued as a share of capacity (a load of 1 or more: full)."""
        return self._rows / self.capacity if self.capacity > 0 else 0.0

    def wait_room(self, timeout: float) -> bool:
        """Wait up to `timeout` seconds for the data rows to fall below capacity."""
        with self._ready:
            return self._ready.wait_for(self.has_room, timeout)

    # --- the executor ---

    def take(self, max_items: int, timeout: float) -> list[Any]:
        """Every protocol message waiting, then data items up to `max_items` in all; waits up
        to `timeout` seconds for something to arrive (0: not at all)."""
        with self._ready:
            if not self._data and not self._protocol and timeout > 0:
                self._ready.wait(timeout)
            out = list(self._protocol)
            self._protocol.clear()
            room = max_items - len(out)
            if room > 0 and self._data:
                if room >= len(self._data):
                    taken = list(self._data)
                    self._data.clear()
                else:
                    taken = [self._data.popleft() for _ in range(room)]
                self._rows -= self._rows_of(taken)
                out += taken
                self._ready.notify_all()  # senders waiting for room
            return out

    def take_protocol(self) -> list[Any]:
        """The protocol messages waiting, leaving data where it is (a paused spout)."""
        with self._ready:
            out = list(self._protocol)
            self._protocol.clear()
            return out

    # --- views (liveness, the in-process runner) ---

    def qsize(self) -> int:
        return len(self._data) + len(self._protocol)

    def empty(self) -> bool:
        return not self._data and not self._protocol

    @property
    def rows(self) -> int:
        return self._rows

    def _rows_of(self, items: list[Any]) -> int:
        if self._weight is None:
            return len(items)
        if self._weighed is None:
            return sum(map(self._weight, items))
        weighed = self._weighed
        heavy = [item for item in items if type(item) is weighed]
        return len(items) - len(heavy) + sum(map(self._weight, heavy)) if heavy else len(items)
