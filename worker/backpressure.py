"""Backpressure and load between workers (Storm 2's BackPressureStatus and load metrics), as
pure decisions.

A worker whose tasks cannot take more (a receive queue full of data, or deliveries parked
for it) tells the topology's other workers which of its tasks are congested: when the set
changes, and every check interval while it is not empty (a lost or late status heals
itself). A sender holds back data for a congested remote task; its spouts pause. A status
not renewed within STALE_CHECKS intervals is forgotten, so a worker that died congested
does not stop its peers for good. Time is passed in.

The same status carries the load of each of the worker's tasks (`loads`, as Storm's workers
send their tasks' receive-queue loads to each other), which the load-aware shuffle of the
other workers weighs (locality.py); while a worker shares its loads (`always`), its status
goes out every check interval, congested or not. A task's load is 0 when idle; see
`task_load`.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass

STALE_CHECKS = 5  # a status older than this many check intervals is forgotten


@dataclass(frozen=True)
class BackpressureStatus:
    """What one worker (`worker`: its host:port) says: these tasks of it are congested
    now (empty: none); `loads`: (task, load) of each of its tasks (empty: not shared)."""

    worker: str
    tasks: frozenset[int]
    loads: tuple[tuple[int, float], ...] = ()


def congested_tasks(full: Iterable[int], parked: Iterable[int]) -> frozenset[int]:
    """A worker's congested tasks: those whose queue is full and those with parked input."""
    return frozenset(full) | frozenset(parked)


def task_load(queue_fill: float, busy_share: float) -> float:
    """A task's load, 0 (idle) to 2: how full its receive queue is (Storm's load) plus how
    busy its worker's one thread is (0 to 1: the share of time it did not wait). A squall
    worker runs its tasks on one thread, so a thread that never waits is as loaded as a full
    queue however short its queues stay (topology.max.spout.pending bounds them); the fill
    still tells a worker's tasks apart. A queue holds more than its capacity at times (what
    a full queue takes without waiting: protocol messages, a peer's frame): it counts as 1."""
    return min(queue_fill, 1.0) + min(busy_share, 1.0)


class StatusSchedule:
    """When a worker sends its status: on a change, and every `interval` seconds while any
    task is congested (`always`: every interval, congested or not: its loads change)."""

    def __init__(self, interval: float, always: bool = False) -> None:
        self.interval = interval
        self.always = always
        self.sent: frozenset[int] = frozenset()
        self.sent_at: float | None = None

    def due(self, congested: frozenset[int], now: float) -> bool:
        changed = congested != self.sent
        late = self.sent_at is None or now - self.sent_at >= self.interval
        if changed or (late and (self.always or bool(congested))):
            self.sent, self.sent_at = congested, now
            return True
        return False


class RemoteCongestion:
    """The congested tasks of the other workers, and their tasks' loads, as their latest
    statuses say."""

    def __init__(self, interval: float) -> None:
        self.max_age = interval * STALE_CHECKS
        self.by_worker: dict[str, tuple[frozenset[int], float]] = {}  # only the congested
        self.loads: dict[str, tuple[dict[int, float], float]] = {}

    def update(self, status: BackpressureStatus, now: float) -> None:
        if status.tasks:
            self.by_worker[status.worker] = (status.tasks, now)
        else:
            self.by_worker.pop(status.worker, None)
        if status.loads:
            self.loads[status.worker] = (dict(status.loads), now)

    def congested(self, task: int, now: float) -> bool:
        for worker, (tasks, at) in list(self.by_worker.items()):
            if now - at > self.max_age:
                self.by_worker.pop(worker, None)
            elif task in tasks:
                return True
        return False

    def load(self, task: int, now: float) -> float | None:
        """`task`'s load as its worker said within the last STALE_CHECKS intervals; None if
        no worker did."""
        for worker, (loads, at) in list(self.loads.items()):
            if now - at > self.max_age:
                self.loads.pop(worker, None)
            elif task in loads:
                return loads[task]
        return None
