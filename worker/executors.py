"""Executors: the thread that runs one task of a spout, bolt, SparkBolt or acker.

An executor is a thin loop: it calls the user's component, feeds what happens (emits, acker
verdicts, ticks of the clock) to its task's pure decision machine (spout_tracking, anchoring,
acker, micro_batches) and carries out the instructions the machine gives.

The seam to the rest of the worker is `TaskIO` and the executor's `inbox`, nothing else:
no ZooKeeper, no sockets, no subprocesses. To run a topology in one process (squall.testing),
build each task's executor with `executor_factory.make_executor`, give them all one TaskIO
whose `send_many` and `deliver_local` put the deliveries, turned into what an inbox holds
(`inbox_item`), on the target executors' inboxes, and call `start()` / `stop()`. An inbox
(receive_queue.py) holds `Tuple` or `Batch` inputs for bolts and protocol messages
(`acking.TreeDone`, `InitTree`, ...) for spouts and ackers.

An executor works in turns (`turn`): it takes every input waiting, does what they ask and
says when it wants its next turn; between turns its thread waits for an arrival. The plain
executors of a worker may also take turns on one shared thread (executor_group.py).
Emitting, buffering and flushing live in emitting.py (`Emitter`, a base class of `Executor`).
"""

from __future__ import annotations

import logging
import sys
import threading
import time
import traceback
from collections.abc import Callable
from typing import Any

from squall.components import Batch, Component, TaskContext
from squall.event_sampling import Sampler

from .acking import AckIds
from .emitting import Emitter, Instruction, _Collector
from .error_throttle import ThrottleState, admit
from .micro_batches import rows
from .receive_queue import ReceiveQueue
from .root_cause import root_cause
from .stall import Progress
from .task_seam import InboxItem, Input, TaskIO, inbox_item
from .task_stats import TaskStats

__all__ = ["Executor", "InboxItem", "Input", "Instruction", "TaskIO", "error_text", "inbox_item"]

log = logging.getLogger("squall.worker")


def error_text(exc: BaseException) -> str:
    """An error report: the root cause in one line first (a Java cause without its stack),
    then where in Python it was raised."""
    frames = "".join(traceback.format_tb(exc.__traceback__, limit=-8))
    return f"{root_cause(exc)}\nTraceback (most recent call last):\n{frames}".rstrip("\n")


class Executor(Emitter):
    ready_on_start = True  # a SparkBolt is ready once its SparkSession is up
    kind = "task"  # what a stall report calls it: spout, bolt, acker

    def __init__(
        self,
        component: Component | None,
        context: TaskContext,
        streams: dict[str, tuple[str, ...]],
        conf: dict[str, Any],
        io: TaskIO,
        new_id: Callable[[], int] | None = None,
    ) -> None:
        self.component = component
        self.context = context
        self.component_id, self.task_id = context.component_id, context.task_id
        self.streams = streams
        self.conf = conf
        self.io = io
        self.new_id = new_id if new_id is not None else AckIds()
        self.stats = TaskStats()
        self.log_throttle = ThrottleState()  # how many of its failures this task logs
        # Storm's debug option: a seeded share of emitted tuples goes to the event log
        self.sampler = Sampler(seed=context.task_id)
        # set by every arrival in the inbox: what the executor's thread (or its group's,
        # executor_group.py) waits on between turns
        self.wake = threading.Event()
        self.inbox = ReceiveQueue(
            conf.get("topology.executor.receive.buffer.size", 32768),
            rows,
            weighed=Batch,
            wake=self.wake,
        )
        self.batch_size = conf.get("topology.producer.batch.size", 1000)
        self.flush_interval = conf.get("topology.batch.flush.interval.millis", 1) / 1000
        self._send_many = io.send_many  # bound once: a flush is per batch, not per tuple
        self._deliver_local = io.deliver_local
        self._here = io.local_tasks  # the tasks this executor hands Tuples to directly
        self._out = []  # emits and acks not yet flushed
        self._local_out = {}  # Tuples made for local tasks, not yet flushed, per target
        self._local_protocol = {}  # protocol messages for local tasks, the same way
        self._held = 0  # how many of both
        self._out_since = 0.0  # when the oldest of them was buffered (monotonic)
        self.stopping = threading.Event()
        self.active = threading.Event()
        self.timeout = conf["topology.message.timeout.secs"]
        # Liveness, read by the worker's watchdog (stall.py); written only by this thread.
        self.progress_at = time.monotonic()
        self.busy = False
        self.holding = 0  # inputs taken and not yet finished
        self.fatal: str | None = None  # why this task stopped for good (its error report)
        self.ended = False  # its turns are over: stopped, or a fatal error
        self.group: Any = None  # the ExecutorGroup whose thread runs it, if any
        self.flush_waits = True  # a flush waits while a target is full (not in a group)
        self.thread = threading.Thread(
            target=self._run, name=f"task-{context.task_id}", daemon=True
        )
        if component is not None:
            component.collector = _Collector(self)
        self._init_kind()

    def _init_kind(self) -> None:
        """What a kind of task (bolt, spout, acker) sets up, once the executor's own state is
        there: a hook, not an overridden __init__ passing *args on, which mypyc's compiled
        classes (squall/hot_path.py) do not take."""

    def start(self) -> None:
        if self.group is not None:
            self.group.start()
        else:
            self.thread.start()

    def stop(self) -> None:
        self.stopping.set()
        self.wake.set()

    def activate(self, on: bool) -> None:
        """The topology's status for a spout (others ignore it): emit or not; a change
        wakes the executor at once."""
        if on:
            self.active.set()
        else:
            self.active.clear()
        self.wake.set()

    @property
    def running(self) -> bool:
        """Whether its turns go on (its thread, or its group's, may outlive it)."""
        return not self.ended and self.thread.is_alive()

    # --- liveness ---

    def mark(self, busy: bool = False, holding: int = 0) -> None:
        """Progress: the thread is back in its loop (busy False) or entering a call that
        may take long (busy True, with `holding` inputs in hand)."""
        self.progress_at = time.monotonic()
        self.busy = busy
        self.holding = holding

    def progress(self) -> Progress:
        return Progress(self.progress_at, self.busy, self.inbox.qsize() + self.holding)

    # --- running ---

    def _failed(self, what: str, fatal: bool = False) -> None:
        """Count and report the exception being handled. A `fatal` one ends the task: it is
        kept in `fatal` for the worker, which reports it and exits (a task that cannot run
        must not leave its tuples replaying forever)."""
        self.stats.errors += 1
        exc = sys.exc_info()[1]
        text = error_text(exc) if exc is not None else f"failed in {what}"
        # the log is throttled as the error reports are: a bolt raising on every tuple wrote
        # a traceback per tuple; the next one logged says how many were held back
        self.log_throttle, verdict = admit(
            self.log_throttle,
            time.monotonic(),
            self.conf.get("topology.max.error.report.per.interval", 5),
            self.conf.get("topology.error.throttle.interval.secs", 10),
            fatal,
            text,
        )
        if verdict.report:
            log.error(
                "task %d (%s) failed in %s%s:\n%s",
                self.context.task_id,
                self.context.component_id,
                what,
                verdict.note,
                traceback.format_exc(limit=8),
            )
        if fatal:
            self.fatal = text
        else:
            self.io.report_error(self.context.component_id, self.context.task_id, text)

    def _call(self, what: str, fn: Any, *args: Any) -> bool:
        """Run user code; an exception is reported, counted and never kills the task."""
        try:
            fn(*args)
        except Exception:  # noqa: BLE001 - user code
            self._failed(what)
            return False
        return True

    def _run(self) -> None:
        try:
            if not self.begin():
                return
            try:
                self.loop()
                self.end()
            except BaseException:  # noqa: BLE001 - a bug, or a user's sys.exit(): never a
                self.loop_failed()  # silent dead thread (threading ignores SystemExit)
        finally:
            self.ended = True

    def begin(self) -> bool:
        """The component's initialize; False when it raised (the task then ends as fatal)."""
        if self.component is not None:
            self.mark(busy=True)
            try:
                self.component.initialize(self.conf, self.context)
            except BaseException:  # noqa: BLE001 - user code (a sys.exit() too)
                self._failed("initialize", fatal=True)
                return False
        self.stats.ready = self.ready_on_start
        self.mark()
        return True

    def loop_failed(self) -> None:
        """A bug in the task's loop or turn (not in user code): the task ends as fatal."""
        self._failed("the task loop", fatal=True)

    def end(self) -> None:
        """The last flush and the component's cleanup, once its turns are over."""
        try:
            self.last_turn()
        except BaseException:  # noqa: BLE001 - as in a turn
            self.loop_failed()
            return
        if self.component is not None:
            self._call("cleanup", self.component.cleanup)

    def loop(self) -> None:
        """Turns on this executor's own thread until it is stopped, waiting between them
        for an arrival or the time the last turn asked for."""
        wake = self.wake
        while not self.stopping.is_set():
            wait = self.turn()
            if wait > 0:
                wake.wait(wait)
                wake.clear()  # what arrived before the clear is taken by the next turn

    def turn(self) -> float:  # pragma: no cover - overridden
        """One turn, never blocking on input: the seconds until the executor wants its next
        turn if nothing arrives meanwhile (0: at once)."""
        raise NotImplementedError

    def last_turn(self) -> None:
        """What is still to do once stopped: by default, flush what is buffered."""
        self.flush()
