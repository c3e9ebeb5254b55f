"""Nimbus's controller: the imperative shell around `decide.handle`.

Thrift calls, ZooKeeper watches and timers build typed events (reading and validating what
they need first) and put them on one queue; the controller thread takes one job at a time,
asks `handle` for the new model and the instructions, carries the instructions out against
ZooKeeper, the store and the timers, and then publishes the new model. Readers on other
threads use whichever model was last published: it is immutable. Uploads and downloads of
code never pass through the queue. The jobs are nimbus/controller_jobs.py, the Thrift
writes that post them nimbus/rpc/user_requests.py, and what carries instructions out
nimbus/instruction_runner.py.
"""

from __future__ import annotations

import functools
import logging
import queue
import threading
import time
from collections.abc import Callable
from concurrent.futures import Future
from typing import Any

from thriftpy2.thrift import TException

from squall import log_config
from squall import thrift_api as T
from squall.nimbus.blobs.code_store import CodeStore
from squall.nimbus.blobs.inbox import Inbox
from squall.nimbus.cluster_state import ClusterState, FencedOut
from squall.nimbus.controller_jobs import Barrier, Decide, Job, Stop, TakeLead
from squall.nimbus.core import events as ev
from squall.nimbus.core import instructions as ins
from squall.nimbus.core.decide import NotLeader, handle
from squall.nimbus.core.model import NimbusModel, NimbusSettings
from squall.nimbus.instruction_runner import InstructionRunner, Later, batches
from squall.nimbus.reads.last_known import CachedReads, ZkOutage
from squall.nimbus.rpc.user_requests import UserRequests
from squall.security.mode import security_on
from squall.security.topology_keys import new_keys

log = logging.getLogger("squall.nimbus")
LeaderOf = Callable[[], str | None]  # "host:port" of the current leader, if any
TIMER_RETRY_SECS = 5.0  # a timed transition whose writes failed is tried again after this


class Controller:
    def __init__(
        self,
        conf: dict[str, Any],
        state: ClusterState,
        inbox: Inbox,
        code: CodeStore,
        later: Later,
        leader_of: LeaderOf = lambda: None,
        clock: Callable[[], float] = time.monotonic,
        wall: Callable[[], float] = time.time,
        outage: ZkOutage | None = None,
    ) -> None:
        self.conf = conf
        self.state = state
        self.reads = CachedReads(state, outage)  # the Thrift reads': remembered for an outage
        self.inbox = inbox
        self.code = code
        self.store = code.store
        self.later = later
        self.leader_of = leader_of
        self.clock = clock
        self.wall = wall
        self.model = NimbusModel(settings=NimbusSettings.from_conf(conf))  # replaced, never changed
        self.jobs: queue.Queue[tuple[Job, Future]] = queue.Queue()
        self.thread = threading.Thread(target=self._run, name="nimbus-controller", daemon=True)
        self.fenced = threading.Event()
        self.runner = InstructionRunner(conf, state, inbox, code, later, self._timer_fired)
        self.requests = UserRequests(self)  # what clients ask of it: submit, kill, ...

    @property
    def leading(self) -> bool:
        return self.model.leading

    def not_leader(self) -> T.IllegalStateException:
        """What a call that only the leader answers raises here, naming the leader."""
        leader = self.leader_of() or "unknown"
        return T.IllegalStateException(msg=f"this nimbus is not the leader; the leader is {leader}")

    # --- the queue ---

    def start(self) -> None:
        self.thread.start()

    def stop(self) -> None:
        self.jobs.put((Stop(), Future()))

    def call(self, job: Job, timeout: float = 120) -> None:
        """Run `job` on the controller thread and wait for it (its refusal is raised here)."""
        future = self.post(job)
        future.result(timeout=timeout)

    def post(self, job: Job) -> Future:
        future: Future = Future()
        self.jobs.put((job, future))
        return future

    def _run(self) -> None:
        while True:
            job, future = self.jobs.get()
            try:
                match job:
                    case Stop():
                        return
                    case Decide(event=event):
                        self._decide(event)
                    case TakeLead():
                        self._take_lead()
                    case Barrier():
                        pass
                    case _:
                        raise TypeError(f"unknown controller job {job!r}")
            except FencedOut as exc:
                log.critical("%s; this nimbus stops acting as leader", exc)
                self.fenced.set()
                future.set_exception(exc)
                return
            except NotLeader:
                future.set_exception(self.not_leader())
            except Exception as exc:  # noqa: BLE001 - one bad job never stops the loop
                if not isinstance(exc, TException):  # a refusal is not nimbus's failure
                    log.exception("controller job %s failed", job)
                    self._retry_timer(job)
                future.set_exception(exc)
            else:
                future.set_result(None)

    def _decide(self, event: ev.Event) -> None:
        began, cpu = self.clock(), time.thread_time()
        model, instructions = handle(self.model, event)
        cpu, decided = time.thread_time() - cpu, self.clock()
        done = 0
        for batch in batches(instructions):
            try:
                self.runner.run_batch(batch)
            except FencedOut:
                raise
            except Exception:
                if done or len(batch) > 1:  # carried out in part: take ZooKeeper's word
                    self.model = self.read_model(refresh=True)
                raise
            done += len(batch)
        self.model = model
        if isinstance(event, ev.MonitorTick) and instructions:  # what failover costs
            log.info(
                "%s: %.3f s after its reads, decided in %.3f s (%.3f s CPU), "
                "%d instructions carried out in %.3f s",
                type(event).__name__,
                began - event.now,
                decided - began,
                cpu,
                len(instructions),
                self.clock() - decided,
            )

    def _timer_fired(self, timer: ins.StartTimer) -> None:
        self.post(Decide(ev.TimerFired(timer.topology_id, timer.event, self.clock(), self.wall())))

    def _retry_timer(self, job: Job) -> None:
        """A kill's removal or a rebalance whose write failed (ZooKeeper lost its leader for
        a moment, say) fires again later: nothing else would, and the topology stayed KILLED
        or REBALANCING until the next failover. The state machine ignores it once the
        topology is gone or this nimbus no longer leads; removal is idempotent."""
        if isinstance(job, Decide) and isinstance(job.event, ev.TimerFired):
            fired = job.event
            retry = ins.StartTimer(fired.topology_id, fired.event, TIMER_RETRY_SECS)
            self.later(TIMER_RETRY_SECS, functools.partial(self._timer_fired, retry))

    # --- events built from ZooKeeper and the store ---

    def _take_lead(self) -> None:
        """Storm's prepare, run when this nimbus wins the election."""
        self.state.ensure_layout()
        epoch = self.state.take_lead()
        if security_on(self.conf):
            for tid in self.state.add_missing_keys(new_keys):
                log.warning("%s had no CURVE keys (made in open mode?): made them", tid)
        stored = frozenset(self.code.topology_ids())
        bases = self.state.read_bases()
        event = ev.BecameLeader(
            epoch=epoch,
            storm_ids=frozenset(self.state.storm_ids()),
            assignment_ids=frozenset(self.state.assignment_ids()),
            bases=bases,
            assignments=self.state.read_assignments(),
            supervisors=self.state.read_supervisors(),
            stored_ids=stored,
            stored_confs={tid: self.code.conf(tid) for tid in sorted(stored & set(bases))},
            log=tuple(self.store.log()),
            now=self.clock(),
            wall=self.wall(),
            log_configs={tid: self.read_log_config(tid) for tid in sorted(bases)},
            tasks=self.state.read_tasks(bases),
        )
        self._decide(event)
        log.info("leading with epoch %d", epoch)

    def read_log_config(self, topology_id: str) -> dict[str, log_config.LoggerLevel]:
        """/logconfigs/<id> as stored; an unreadable record reads as empty (and is logged):
        the next setLogConfig replaces it."""
        where = self.state.layout.logconfig(topology_id)
        try:
            return log_config.decode(self.state.read_log_config(topology_id), where)
        except log_config.LogConfigError as exc:
            log.warning("%s", exc)
            return {}

    def monitor(self, supervisors_changed: bool = False) -> None:
        """A monitor round (timer) or a supervisor change (watch): read, then decide. A
        supervisor change reads no beats: a lost supervisor's tasks move at once, judged on
        the beats the last round saw (at most nimbus.monitor.freq.secs old, well inside
        nimbus.task.timeout.secs), instead of after reading every worker's beat first, which
        made failover grow with the cluster (bench/controlplane.py). It reads only the
        supervisors it does not know yet (a record rewritten in place, which no children
        watch reports anyway, waits for the next round)."""
        if not self.leading:
            return
        kind = ev.SupervisorsChanged if supervisors_changed else ev.MonitorTick
        topologies = () if supervisors_changed else self.model.topologies
        began = self.clock()
        beats = {tid: self.state.read_beats(tid) for tid in topologies}
        known = self.model.supervisors if supervisors_changed else None
        supervisors = self.state.read_supervisors(known)
        now, wall = self.clock(), self.wall()
        if supervisors_changed:
            read = now - began
            log.info("supervisor change: %d supervisors read in %.3f s", len(supervisors), read)
        self.post(Decide(kind(now, wall, supervisors, beats)))

    # --- Thrift reads: from the published model (a standby re-reads ZooKeeper first) ---

    def read_model(self, refresh: bool = False) -> NimbusModel:
        """The leader's model; a standby's refreshed from ZooKeeper, or while ZooKeeper is
        unreachable from what it last read there (`refresh`: a leader's decision carried out
        in part, which must take ZooKeeper's word, never a remembered one)."""
        model = self.model
        if model.leading and not refresh:
            return model
        reads = self.state if refresh else self.reads
        bases = reads.read_bases()
        assignments = {t: a for t, a in reads.read_assignments().items() if t in bases}
        # a leader's decision carried out in part may have renumbered /tasks: take its word
        tasks = reads.read_tasks(bases) if model.leading else None
        refreshed = ev.Refreshed(bases, assignments, reads.read_supervisors(), tasks)
        return handle(model, refreshed)[0]
