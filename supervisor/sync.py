"""What a supervisor should run, decided from plain data (no ZooKeeper, no processes).

`accept_epochs` decides which assignment of each topology to act on: one whose epoch is
later than the current /nimbus/epoch was written by no nimbus (anyone can write ZooKeeper
without ACLs) and one older than the newest seen was written by a deposed nimbus; either is
ignored and the one accepted before stays in force, so the topology keeps running and nimbus's
next real write applies. `desired_workers` reads the accepted assignments for this
supervisor's own slots; `plan` compares that with the running workers; `startable` holds
back the starts whose code is not ready or whose slot is backing off after a crash.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from squall.liveness import is_alive
from squall.processes import WORKER_REASSIGNED
from squall.records import Assignment, trusted_epoch

from .backoff import Retry, due

if TYPE_CHECKING:
    from .launcher import Exit

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


@dataclass(frozen=True)
class Accepted:
    """The assignments to act on, the newest epoch seen per topology, and the topologies
    whose assignment in ZooKeeper was refused this time (to log)."""

    assignments: dict[str, Assignment]
    seen: dict[str, int]
    refused: tuple[str, ...]


def accept_epochs(
    assignments: Mapping[str, Assignment],
    current_epoch: int | None,
    seen: Mapping[str, int],
    previous: Mapping[str, Assignment],
) -> Accepted:
    """Per topology in ZooKeeper: its assignment when the epoch is trusted (at most the
    current epoch) and not older than the newest seen; otherwise the one accepted before, if
    any. An unreadable current epoch (None) trusts nothing new. A high-water mark above the
    current epoch is dropped (the epoch node is the truth), so a forged one can never lock
    out the real leader's later writes. A topology gone from ZooKeeper is gone."""
    kept, newest, refused = {}, {}, []
    for tid, a in sorted(assignments.items()):
        floor = seen.get(tid, 0)
        if current_epoch is not None and floor > current_epoch:
            floor = 0
        if current_epoch is not None and trusted_epoch(a.epoch, current_epoch) and a.epoch >= floor:
            kept[tid], newest[tid] = a, a.epoch
            continue
        refused.append(tid)
        if tid in previous:
            kept[tid] = previous[tid]
        if tid in seen:
            newest[tid] = floor
    return Accepted(kept, newest, tuple(refused))


@dataclass(frozen=True)
class AssignmentReads:
    """Which /assignments/<id> nodes a sync reads: `read` again, `drop` (gone from
    ZooKeeper), and whether this is a `full` re-read of them all."""

    read: frozenset[str]
    drop: frozenset[str]
    full: bool

    @property
    def changed(self) -> bool:
        return self.full or bool(self.read or self.drop)


def assignment_reads(
    cached: Iterable[str],
    children: Iterable[str] | None,
    fired: Iterable[str],
    full_due: bool,
) -> AssignmentReads:
    """Re-read only the assignments whose watch fired, the new ones and none that left:
    re-reading every assignment each supervisor.monitor.frequency.secs made reads grow as
    supervisors x topologies (1.7 M reads/s for 10,000 hosts and 500 topologies). A full
    re-read, when due or before the children are known (`children` None), is the safety net
    for a watch lost with a session."""
    cached = set(cached)
    if full_due or children is None:
        return AssignmentReads(frozenset(), frozenset(), True)
    present = set(children)
    read = (set(fired) | (present - cached)) & present
    return AssignmentReads(frozenset(read), frozenset(cached - present), False)


def desired_workers(
    supervisor_id: str, assignments: Mapping[str, Assignment], ports: Iterable[int]
) -> dict:
    """Workers on this supervisor's configured ports only: an assignment naming another
    port would have it bind a port it was never given."""
    own = set(ports)
    desired: dict[WorkerKey, WorkerSpec] = {}
    for tid, a in sorted(assignments.items()):
        for slot in sorted(a.slots()):
            if slot[0] == supervisor_id and slot[1] in own:
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


def reassigned_away(ended: Exit, desired: Mapping[WorkerKey, WorkerSpec]) -> bool:
    """A worker that exited because what it ran was taken from it (WORKER_REASSIGNED, or 0
    from a worker of an older version) and this supervisor accepted that change too: not a
    failure, no error in the topology's /errors, no back-off before what is wanted now
    starts. One that exits so while still wanted as it was started (an assignment this
    supervisor has not accepted, yet or ever) backs off, so it cannot loop."""
    spec = desired.get(ended.key)
    changed = spec is None or spec.identity != ended.identity
    return ended.returncode in (0, WORKER_REASSIGNED) and changed


@dataclass
class BeatTracker:
    """When each running worker's heartbeat last changed, on the supervisor's own monotonic
    clock (a worker's clock is never read).

    Beats travel through ZooKeeper: while this supervisor is cut off from it, or its workers
    are, no beat can change, so no worker is judged while ZooKeeper is away and each has a
    whole timeout from its return (`back`) to beat again. Otherwise an outage longer than
    supervisor.worker.timeout.secs would restart every worker of every supervisor at once."""

    changed: dict[WorkerKey, tuple[int, float]]
    away: bool = False  # ZooKeeper suspended or lost, not yet back
    back: float = float("-inf")  # when it last came back

    def zookeeper_away(self) -> None:
        self.away = True

    def zookeeper_back(self, now: float) -> None:
        self.away, self.back = False, now

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
        since they started (a beat from an earlier incarnation does not count), nor since
        ZooKeeper came back."""
        if self.away:
            return []
        out = []
        for key, started_at in sorted(started.items()):
            seen = self.changed.get(key)
            last = seen[1] if seen else None
            if self.back > started_at:
                last = self.back if last is None else max(last, self.back)
            if not is_alive(started_at, last, now, timeout, start_timeout):
                out.append(key)
        return out

    def forget(self, key: WorkerKey) -> None:
        self.changed.pop(key, None)


def startable(
    starts: Iterable[WorkerSpec],
    code_ready: Callable[[str], bool],
    restarts: Mapping[WorkerKey, Retry],
    now: float,
) -> tuple[WorkerSpec, ...]:
    """The planned starts that may go now: their topology's code is unpacked and their
    slot's restart back-off has passed. The others wait, and never hold up the rest."""
    return tuple(
        s
        for s in starts
        if code_ready(s.topology_id) and due(restarts.get((s.topology_id, s.port)), now)
    )
