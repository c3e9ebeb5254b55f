"""What a supervisor should run, decided from plain data (no ZooKeeper, no processes).

`desired_workers` reads the assignments for this supervisor's slots, ignoring any assignment
whose epoch is older than the newest this supervisor has seen for that topology (a deposed
nimbus's write). `plan` compares that with the running workers.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from squall.liveness import is_alive
from squall.records import Assignment

WorkerKey = tuple[str, int]  # (topology id, port)


@dataclass(frozen=True)
class WorkerSpec:
    topology_id: str
    port: int
    tasks: tuple[int, ...]
    started: int  # newest start time of its tasks: nimbus restarting a task in place bumps it

    @property
    def identity(self) -> tuple[tuple[int, ...], int]:
        return self.tasks, self.started


@dataclass(frozen=True)
class SyncPlan:
    start: tuple[WorkerSpec, ...]
    stop: tuple[WorkerKey, ...]


def accept_epochs(
    assignments: Mapping[str, Assignment], seen: Mapping[str, int]
) -> tuple[dict[str, Assignment], dict[str, int]]:
    """Drop assignments older than the newest epoch seen per topology; return the rest and
    the updated high-water marks."""
    kept, newest = {}, dict(seen)
    for tid, a in assignments.items():
        if a.epoch >= seen.get(tid, 0):
            kept[tid] = a
            newest[tid] = a.epoch
    return kept, newest


def desired_workers(supervisor_id: str, assignments: Mapping[str, Assignment]) -> dict:
    desired: dict[WorkerKey, WorkerSpec] = {}
    for tid, a in sorted(assignments.items()):
        for slot in sorted(a.slots()):
            if slot[0] == supervisor_id:
                tasks = tuple(a.tasks_on(slot))
                started = max(a.task_start_secs.get(t, 0) for t in tasks)
                desired[(tid, slot[1])] = WorkerSpec(tid, slot[1], tasks, started)
    return desired


def plan(desired: Mapping[WorkerKey, WorkerSpec], running: Mapping[WorkerKey, Any]) -> SyncPlan:
    """Start what is wanted and not running; stop what is running and not wanted. A worker
    whose tasks (or their start time) changed is stopped and its replacement started.
    `running` maps each worker to the `identity` of the spec it was started from."""
    stop = [k for k, ident in running.items() if k not in desired or desired[k].identity != ident]
    start = [s for k, s in desired.items() if k not in running or k in stop]
    return SyncPlan(
        tuple(sorted(start, key=lambda s: (s.topology_id, s.port))), tuple(sorted(stop))
    )


@dataclass
class BeatTracker:
    """When each running worker's heartbeat last changed, on the supervisor's own monotonic
    clock (a worker's clock is never read)."""

    changed: dict[WorkerKey, tuple[int, float]]

    def observe(self, seqs: Mapping[WorkerKey, int], now: float) -> None:
        for key, seq in seqs.items():
            old = self.changed.get(key)
            if old is None or old[0] != seq:
                self.changed[key] = (seq, now)

    def hung(
        self,
        started: Mapping[WorkerKey, float],
        now: float,
        timeout: float,
        start_timeout: float,
    ) -> list[WorkerKey]:
        """Workers past their start-up grace whose beat has not changed within `timeout`
        since they started (a beat from an earlier incarnation does not count)."""
        out = []
        for key, started_at in sorted(started.items()):
            seen = self.changed.get(key)
            last = seen[1] if seen else None
            if not is_alive(started_at, last, now, timeout, start_timeout):
                out.append(key)
        return out

    def forget(self, key: WorkerKey) -> None:
        self.changed.pop(key, None)
