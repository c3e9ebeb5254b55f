"""The shell of a worker's life cycle (lifecycle.py): ZooKeeper's watches, the worker's rounds
and its exits become events, and the instructions are carried out here.

One lock orders the machine's steps and what they do to the worker (spouts on or off,
routes, stopping): a watch's thread and the round's never interleave two steps' effects. A
round's ZooKeeper calls run outside it: the assignment recheck hands an assignment back
through the watch's callback, which steps again. A call that finds ZooKeeper away skips the
rest of the round (ZOOKEEPER_AWAY), which the machine notes: the tasks go on, the next
beat carries the same cumulative counters, and nimbus counts a worker dead only after
nimbus.task.timeout.secs without beats. Exiting would restart every task of the worker for
an outage of the coordination service alone.
A mixin of WorkerProcess (main.py), which owns the attributes named below."""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Callable

from squall.event_sampling import percentage_for
from squall.records import Assignment, StormBase

from . import lifecycle as lc
from .error_reports import ErrorReports
from .executors import Executor
from .routing import Router
from .transport import Transport
from .zk_agent import ZOOKEEPER_AWAY, ZooKeeperAgent

log = logging.getLogger("squall.worker")


class ZooKeeperReactions:
    tid: str
    stopping: threading.Event
    agent: ZooKeeperAgent
    executors: dict[int, Executor]
    transport: Transport
    router: Router
    errors: ErrorReports
    exit_code: int
    life: lc.Lifecycle
    stepping: threading.Lock  # one step and its effects at a time

    beat: Callable[[], None]  # WorkerProcess's

    def react(self, event: lc.Event) -> list[lc.Instruction]:
        """Step the machine and carry out what it says, but for a round's ZooKeeper calls,
        which are returned for the caller to make without the lock."""
        later: list[lc.Instruction] = []
        with self.stepping:
            self.life, instructions = lc.step(self.life, event, time.monotonic())
            for instruction in instructions:
                match instruction:
                    case lc.SetEmitting(emit=emit):
                        for executor in self.executors.values():
                            executor.activate(emit)
                    case lc.Route(addresses=addresses, host=host):
                        self.transport.route(dict(addresses), set(self.life.my_tasks))
                        self.router.place({t: a[0] for t, a in addresses.items()}, host)
                    case lc.Say(text=text, level=level):
                        log.log(level, "%s", text)
                    case lc.Exit(code=code):
                        self.exit_code = code
                        self.stopping.set()
                    case _:
                        later.append(instruction)
        return later

    def _status_changed(self, base: StormBase | None) -> None:
        if base is not None:
            for executor in self.executors.values():
                component = executor.context.component_id
                executor.sampler.percentage = percentage_for(
                    base.component_debug, self.tid, component
                )
        self.react(lc.StatusRead(None if base is None else base.status == "active"))

    def _assignment_changed(self, assignment: Assignment | None) -> bool:
        """Whether the watch goes on (not once the worker exits)."""
        self.react(lc.AssignmentRead(assignment))
        return self.life.exit_code is None

    def _zookeeper_round(self) -> float:
        """Beat (when due, or when a task here became ready), check readiness, write the
        tasks' error reports (error_reports.py); the seconds until the next round."""
        ready_here = frozenset(t for t, e in self.executors.items() if e.stats.ready)
        try:
            for instruction in self.react(lc.Tick(ready_here)):
                self._call_zookeeper(instruction)
        except ZOOKEEPER_AWAY as exc:
            log.warning("ZooKeeper unavailable (%s): heartbeat skipped", type(exc).__name__)
            self.react(lc.ZooKeeperAway())
        else:
            self.react(lc.ZooKeeperBack())
        return lc.next_round(self.life)

    def _call_zookeeper(self, instruction: lc.Instruction) -> None:
        match instruction:
            case lc.Beat(ready_here=ready_here):
                log.debug("heartbeat of %d tasks", len(self.executors))
                self.beat()
                self.react(lc.Beaten(ready_here))
            case lc.RecheckAssignment():
                self.agent.recheck_assignment()
            case lc.ReadBeats():
                self.react(lc.BeatsRead(self.agent.beats()))
            case lc.WriteErrors():
                self.errors.report_held_back()
                self.errors.write_pending()
            case _:
                raise TypeError(f"not a round's ZooKeeper call: {instruction!r}")
