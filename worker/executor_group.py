"""The plain executors of a worker (spouts, bolts, ackers) taking turns on one thread.

Under CPython's GIL the threads of one worker never run Python at the same time, yet every
tuple crossed three or four of them, and each hand-over cost a wake-up, a lock and a wait for
the GIL: measured on the per-tuple bench, 40% of a worker's CPU went to hand-overs. On one
thread (as a Bytewax worker runs its dataflow) a tuple emitted in a turn is taken in the
next member's turn of the same round, in batches as large as the spout's bursts.

What stays on threads of their own: SparkBolts (a Spark job blocks for seconds), shell
components and any component whose class sets `own_thread = True` (one that blocks in its
calls, sleeps or waits on I/O), and everything when `topology.worker.shared.thread` is false.

Members never wait in a flush (a full queue only this thread could empty would hang it, and
two workers waiting on each other's full queues would deadlock): backpressure holds their
spouts instead, which look at every task downstream of them (Router.downstream) before a
burst, and the round then drains what is queued.
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Callable, Iterable, Mapping
from typing import Any

from squall.structure import TopologyStructure

from .bolt_executor import SparkBoltExecutor
from .executors import Executor
from .wakeup import FdWake

log = logging.getLogger("squall.worker")

MAX_WAIT = 0.5  # seconds an idle group sleeps at most before every member takes a turn


def shares_thread(executor: Executor) -> bool:
    """Whether an executor may take turns on its worker's shared thread."""
    component = executor.component
    return not isinstance(executor, SparkBoltExecutor) and not getattr(
        component, "own_thread", False
    )


class ExecutorGroup:
    def __init__(self, members: Iterable[Executor], name: str) -> None:
        self.members = list(members)
        self.thread = threading.Thread(target=self._run, name=name, daemon=True)
        self.wake = FdWake(owner=self.thread)
        self._started = False
        # the worker's transport, when it runs on this thread (Transport.share): what arrived
        # is taken in before each round, what the rounds emitted is sent after one (each
        # returning how soon it must run again)
        self.before_round: list[Callable[[], float]] = []
        self.after_round: list[Callable[[], float | None]] = []
        # how the thread waits between rounds, up to the seconds given (set by the
        # transport: for its socket too)
        self.idle: Callable[[float], object] = self.wake.wait
        for member in self.members:
            member.group = self
            member.thread = self.thread
            member.wake = member.inbox.wake = self.wake
            member.flush_waits = False

    def start(self) -> None:
        """Start the shared thread (each member's `start` calls it; the first one counts)."""
        if not self._started:
            self._started = True
            self.thread.start()

    def _run(self) -> None:
        live = []
        for member in self.members:
            if member.begin():
                live.append(member)
            else:
                member.ended = True
        try:
            self._turns(live)
        finally:
            for member in self.members:
                member.ended = True

    def _turns(self, live: list[Executor]) -> None:
        wake, idle, before, after = self.wake, self.idle, self.before_round, self.after_round
        while live:
            wait = MAX_WAIT
            for chore in before:
                wait = min(wait, _chore(chore, MAX_WAIT))
            for member in list(live):
                if member.stopping.is_set():
                    live.remove(member)
                    try:
                        member.end()
                    except BaseException:  # noqa: BLE001 - a sys.exit() in a cleanup: the
                        member.loop_failed()  # other members still end
                    member.ended = True
                    continue
                try:
                    wait = min(wait, member.turn())
                except BaseException:  # noqa: BLE001 - a bug or a sys.exit() in a turn ends
                    # that task, not all (threading would end the thread without a word)
                    member.loop_failed()
                    live.remove(member)
                    member.ended = True
            for chore_after in after:
                due = _chore(chore_after, None)
                if due is not None:
                    wait = min(wait, due)
            if wait > 0 and live:
                try:
                    idle(wait)
                except Exception:  # noqa: BLE001 - the transport's poll: wait on the wake alone
                    log.exception("the shared thread's idle poll failed; it waits on wake-ups")
                    idle = self.idle = wake.wait
                wake.clear()  # what arrived before the clear is taken in the next round


def _chore(chore: Callable[[], Any], failed: Any) -> Any:
    """A transport chore; a bug in it is logged, and must not end every task."""
    try:
        return chore()
    except Exception:  # noqa: BLE001 - logged; the next round tries again
        log.exception("the transport failed on the shared thread")
        return failed


def group_executors(
    executors: Mapping[int, Executor], structure: TopologyStructure, conf: Mapping[str, Any]
) -> list[ExecutorGroup]:
    """Put the executors that may share a thread into one group (none when the topology's
    `topology.worker.shared.thread` is false); the others keep their own threads.

    Members take their turns in the order tuples flow (spouts, then each bolt after those it
    reads from, ackers last), so that what a spout emits is processed, acked and decided in
    the same round: in task-id order a tree took three rounds (p50 7 ms at half rate)."""
    if not conf.get("topology.worker.shared.thread", True):
        return []
    depth = flow_depths(structure)
    members = sorted(
        (e for e in executors.values() if shares_thread(e)),
        key=lambda e: (depth.get(e.context.component_id, len(depth)), e.context.task_id),
    )
    return [ExecutorGroup(members, "tasks")] if len(members) > 1 else []


def flow_depths(structure: TopologyStructure) -> dict[str, int]:
    """Each component's place in the flow: 0 for a spout, else one more than the deepest
    component it reads from (an input that closes a cycle does not count). Ackers and
    system components are not in it: they go last."""
    inputs = {
        name: {i.component for i in info.inputs} for name, info in structure.components.items()
    }
    depths: dict[str, int] = {}

    def depth(name: str, seen: frozenset[str]) -> int:
        if name not in depths:
            seen = seen | {name}
            sources = [c for c in inputs.get(name, ()) if c in inputs and c not in seen]
            depths[name] = 1 + max((depth(c, seen) for c in sources), default=-1)
        return depths[name]

    for name in inputs:
        depth(name, frozenset())
    return depths
