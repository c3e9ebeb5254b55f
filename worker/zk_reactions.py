"""A worker's reactions to what ZooKeeper tells it. Spouts run only while the topology is active,
and not before every task of it is ready (readiness.py); routing follows moves of other tasks;
if its own tasks change or the topology goes away, the worker stops so that the supervisor
starts what is wanted now; a heartbeat round without ZooKeeper is skipped, not fatal.
A mixin of WorkerProcess (main.py), which owns the state named below."""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Callable

from squall.event_sampling import percentage_for
from squall.processes import WORKER_REASSIGNED
from squall.records import Assignment, StormBase
from squall.zk_layout import ZkLayout

from .error_reports import ErrorReports
from .executors import Executor
from .readiness import ready_tasks, round_wait, summary, waiting_for
from .routing import Router
from .transport import Transport
from .zk_agent import ZOOKEEPER_AWAY, ZooKeeperAgent

log = logging.getLogger("squall.worker")


class ZooKeeperReactions:
    tid: str
    slot: tuple[str, int]
    stopping: threading.Event
    agent: ZooKeeperAgent
    executors: dict[int, Executor]
    activation: threading.Lock
    status_active: bool
    topology_ready: bool
    topology_tasks: tuple[int, ...]
    topology_beats: dict[int, str]  # each task's heartbeat node (its slot's) by name
    topology_workers: int
    beat_period: float
    beat_due: float  # when the next heartbeat is written, whatever changes
    beaten_ready: frozenset[int]  # this worker's ready tasks as the last heartbeat said
    my_tasks: tuple[int, ...]
    components: dict[int, str]
    waiting_logged: float
    transport: Transport
    router: Router
    errors: ErrorReports
    exit_code: int

    beat: Callable[[], None]  # WorkerProcess's

    def _status_changed(self, base: StormBase | None) -> None:
        if base is None:
            self._reassigned()
            return
        with self.activation:
            self.status_active = base.status == "active"
        for executor in self.executors.values():
            component = executor.context.component_id
            executor.sampler.percentage = percentage_for(base.component_debug, self.tid, component)
        self._apply_activation()

    def _apply_activation(self) -> None:
        with self.activation:
            emit = self.status_active and self.topology_ready
            for executor in self.executors.values():
                executor.activate(emit)

    def _check_ready(self) -> None:
        """Latch `topology_ready` once every task's heartbeat says it is ready (readiness.py
        says why spouts wait for it)."""
        ready = ready_tasks(self.agent.beats(), self.topology_beats)
        waiting = waiting_for(self.topology_tasks, ready)
        if not waiting:
            log.info("every task of the topology is ready; spouts may emit")
            self.topology_ready = True
            self._apply_activation()
        elif time.monotonic() - self.waiting_logged > 10:
            self.waiting_logged = time.monotonic()
            log.info("spouts wait for %s to be ready", summary(waiting, self.components))

    def _route(self, assignment: Assignment) -> None:
        addresses = {
            task: (assignment.node_host.get(slot[0], slot[0]), slot[1])
            for task, slot in assignment.task_slots.items()
        }
        self.transport.route(addresses, set(self.my_tasks))
        host = assignment.node_host.get(self.slot[0], self.slot[0])
        self.router.place({t: a[0] for t, a in addresses.items()}, host)

    def _assignment_changed(self, assignment: Assignment | None) -> bool:
        if assignment is None:
            self._reassigned()
            return False
        if tuple(assignment.tasks_on(self.slot)) != self.my_tasks:
            log.info("this worker's tasks changed; exiting so the supervisor restarts it")
            self._reassigned()
            return False
        self._note_topology(assignment)
        self._route(assignment)
        return True

    def _reassigned(self) -> None:
        self.exit_code = WORKER_REASSIGNED
        self.stopping.set()

    def _note_topology(self, assignment: Assignment) -> None:
        self.topology_tasks = tuple(assignment.task_slots)
        self.topology_beats = {
            task: ZkLayout.beat_name(node, port)
            for task, (node, port) in assignment.task_slots.items()
        }
        self.topology_workers = len(set(assignment.task_slots.values()))

    def _zookeeper_round(self) -> float:
        """Beat (when due, or when a task here became ready), check readiness, write the
        tasks' error reports (error_reports.py); the seconds until the next round
        (readiness.py says how often).
        Without ZooKeeper (no quorum, or a reconnect after its server went) the round is
        skipped and the tasks go on: the next beat carries the same cumulative counters, and
        nimbus counts a worker dead only after nimbus.task.timeout.secs without beats.
        Exiting would restart every task of the worker for an outage of the coordination
        service alone."""
        now = time.monotonic()
        ready_here = frozenset(t for t, e in self.executors.items() if e.stats.ready)
        try:
            if now >= self.beat_due or ready_here != self.beaten_ready:
                log.debug("heartbeat of %d tasks", len(self.executors))
                self.beat()
                self.beat_due, self.beaten_ready = now + self.beat_period, ready_here
            self.agent.recheck_assignment()
            if not self.topology_ready:
                self._check_ready()
            self.errors.report_held_back()
            self.errors.write_pending()
        except ZOOKEEPER_AWAY as exc:
            log.warning("ZooKeeper unavailable (%s): heartbeat skipped", type(exc).__name__)
            return self.beat_period  # no quicker looks (nor warnings) while it is away
        return round_wait(self.topology_ready, self.topology_workers, self.beat_period)
