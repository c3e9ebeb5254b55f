"""Backpressure between workers (Storm 2's BackPressureStatus), as pure decisions.

A worker whose tasks cannot take more (a receive queue full of data, or deliveries parked
for it) tells the topology's other workers which of its tasks are congested: when the set
changes, and every check interval while it is not empty (a lost or late status heals
itself). A sender holds back data for a congested remote task; its spouts pause. A status
not renewed within STALE_CHECKS intervals is forgotten, so a worker that died congested
does not stop its peers for good. Time is passed in.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass

STALE_CHECKS = 5  # a status older than this many check intervals is forgotten


@dataclass(frozen=True)
class BackpressureStatus:
    """What one worker (`worker`: its host:port) says: these tasks of it are congested
    now (empty: none)."""

    worker: str
    tasks: frozenset[int]


def congested_tasks(full: Iterable[int], parked: Iterable[int]) -> frozenset[int]:
    """A worker's congested tasks: those whose queue is full and those with parked input."""
    return frozenset(full) | frozenset(parked)


class StatusSchedule:
    """When a worker sends its status: on a change, and every `interval` seconds while any
    task is congested."""

    def __init__(self, interval: float) -> None:
        self.interval = interval
        self.sent: frozenset[int] = frozenset()
        self.sent_at: float | None = None

    def due(self, congested: frozenset[int], now: float) -> bool:
        changed = congested != self.sent
        renew = bool(congested) and (self.sent_at is None or now - self.sent_at >= self.interval)
        if changed or renew:
            self.sent, self.sent_at = congested, now
            return True
        return False


class RemoteCongestion:
    """The congested tasks of the other workers, as their latest statuses say."""

    def __init__(self, interval: float) -> None:
        self.max_age = interval * STALE_CHECKS
        self.by_worker: dict[str, tuple[frozenset[int], float]] = {}

    def update(self, status: BackpressureStatus, now: float) -> None:
        if status.tasks:
            self.by_worker[status.worker] = (status.tasks, now)
        else:
            self.by_worker.pop(status.worker, None)

    def congested(self, task: int, now: float) -> bool:
        for worker, (tasks, at) in list(self.by_worker.items()):
            if now - at > self.max_age:
                self.by_worker.pop(worker, None)
            elif task in tasks:
                return True
        return False
