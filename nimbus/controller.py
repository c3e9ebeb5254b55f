"""Nimbus's controller: the imperative shell around `decide.handle`.

Thrift calls, ZooKeeper watches and timers build typed events (reading and validating what
they need first) and put them on one queue; the controller thread takes one job at a time,
asks `handle` for the new model and the instructions, carries the instructions out against
ZooKeeper, the store and the timers, and then publishes the new model. Readers on other
threads use whichever model was last published: it is immutable. Uploads and downloads of
code never pass through the queue.
"""

from __future__ import annotations

import json
import logging
import queue
import threading
import time
import uuid
from collections.abc import Callable
from concurrent.futures import Future
from dataclasses import dataclass
from typing import Any

from thriftpy2.thrift import TException

from squall import log_config
from squall import thrift_api as T
from squall.security import security_on
from squall.topology_keys import new_keys
from squall.validation import check_topology_name, validate_topology, validate_topology_conf

from . import events as ev
from . import instructions as ins
from .cluster_state import ClusterState, FencedOut
from .code_store import CodeStore
from .decide import NotLeader, handle
from .inbox import Inbox
from .model import NimbusModel, NimbusSettings

log = logging.getLogger("squall.nimbus")

Later = Callable[[float, Callable[[], None]], None]  # run a callable after a delay
LeaderOf = Callable[[], str | None]  # "host:port" of the current leader, if any


@dataclass(frozen=True)
class Decide:
    """Run `handle` on this event and carry out its instructions."""

    event: ev.Event


@dataclass(frozen=True)
class TakeLead:
    """Take the epoch, load what the new leader needs, and decide BecameLeader."""


@dataclass(frozen=True)
class Stop:
    pass


@dataclass(frozen=True)
class Barrier:
    """Nothing: done once every job posted before it is done (a lead being taken)."""


Job = Decide | TakeLead | Stop | Barrier

BATCHED = (ins.WriteAssignment, ins.AppendLog)


def batches(instructions: list[ins.Instruction]) -> list[list[ins.Instruction]]:
    """Consecutive assignment writes together, and consecutive log messages together (a lost
    host's topologies: pipelined ZooKeeper writes and one database commit instead of two
    round trips and a commit per topology); every other instruction alone, all in order."""
    out: list[list[ins.Instruction]] = []
    for i in instructions:
        if out and isinstance(i, BATCHED) and type(out[-1][0]) is type(i):
            out[-1].append(i)
        else:
            out.append([i])
    return out


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
    ) -> None:
        self.conf = conf
        self.state = state
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

    @property
    def leading(self) -> bool:
        return self.model.leading

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
                future.set_exception(self._not_leader())
            except Exception as exc:  # noqa: BLE001 - one bad job never stops the loop
                if not isinstance(exc, TException):  # a refusal is not nimbus's failure
                    log.exception("controller job %s failed", job)
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
                self._execute_batch(batch)
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

    # --- carrying out instructions ---

    def _fence(self, i: ins.Instruction) -> None:
        if getattr(i, "epoch", self.state.epoch) != self.state.epoch:
            raise FencedOut(f"instruction of epoch {i.epoch}; this nimbus has {self.state.epoch}")

    def _execute_batch(self, batch: list[ins.Instruction]) -> None:
        """A run of assignment writes, or of log messages, carried out together (see
        `batches`); anything else one at a time."""
        if len(batch) == 1:
            self._execute(batch[0])
            return
        for i in batch:
            self._fence(i)
        writes = [(i.topology_id, i.assignment) for i in batch if type(i) is ins.WriteAssignment]
        messages = [(i.type, i.key, dict(i.values)) for i in batch if type(i) is ins.AppendLog]
        match batch[0]:
            case ins.WriteAssignment():
                self.state.write_assignments(writes)
                for tid, assignment in writes:
                    slots = len(assignment.slots())
                    log.info("%s: %d tasks on %d slots", tid, len(assignment.task_slots), slots)
            case ins.AppendLog():
                self.state.check_lead()
                self.store.append_all(messages)
            case _:
                raise TypeError(f"no batch of {batch[0]!r}")

    def _execute(self, i: ins.Instruction) -> None:
        self._fence(i)
        match i:
            case ins.SaveCode():
                self.state.check_lead()
                upload = self.inbox.take(i.location)
                self.code.save(i.topology_id, i.name, upload, i.structure, dict(i.conf), i.wall)
            case ins.CreateTopology():
                try:
                    # randomness stays in the shell: decide.py never sees the keys
                    keys = new_keys() if security_on(self.conf) else None
                    self.state.create_topology(
                        i.topology_id, i.base, dict(i.tasks), i.assignment, keys
                    )
                except Exception:
                    self.code.remove(i.topology_id)
                    raise
                log.info("created %s (%d tasks)", i.topology_id, len(i.tasks))
            case ins.WriteBase():
                self.state.write_base(i.topology_id, i.base)
            case ins.WriteTasks():
                self.state.write_tasks(i.topology_id, dict(i.tasks))
            case ins.WriteAssignment():
                self.state.write_assignment(i.topology_id, i.assignment)
                slots = len(i.assignment.slots())
                log.info(
                    "%s: %d tasks on %d slots", i.topology_id, len(i.assignment.task_slots), slots
                )
            case ins.UpdateConf():
                self.state.check_lead()
                self.code.update_conf(i.topology_id, dict(i.conf))
            case ins.WriteLogConfig():
                self.state.write_log_config(i.topology_id, log_config.encode(i.config))
            case ins.RemoveTopology():
                log.info("removing topology %s", i.topology_id)
                self.state.remove_topology(i.topology_id)
                self.code.remove(i.topology_id)
            case ins.RemoveCode():
                log.info("removing code of %s, which has no /storms node", i.topology_id)
                self.code.remove(i.topology_id)
            case ins.RemoveOrphanAssignment():
                self.state.remove_orphan(self.state.layout.assignment(i.topology_id))
            case ins.AppendLog():
                self.state.check_lead()
                self.store.append(i.type, i.key, dict(i.values))
            case ins.StartTimer():
                self.later(i.delay_secs, lambda i=i: self._timer_fired(i))
            case _:
                raise TypeError(f"unknown nimbus instruction {i!r}")

    def _timer_fired(self, timer: ins.StartTimer) -> None:
        self.post(Decide(ev.TimerFired(timer.topology_id, timer.event, self.clock(), self.wall())))

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

    def cleanup_inbox(self) -> None:
        """Expire abandoned uploads and downloads (Inbox and CodeStore lock themselves)."""
        now = self.clock()
        expired = self.inbox.expire(now, self.conf["nimbus.inbox.jar.expiration.secs"])
        if expired:
            log.info("deleted %d expired uploads", len(expired))
        self.code.expire_downloads(now, self.conf["nimbus.file.copy.expiration.secs"])

    # --- Thrift writes: validate, build the event, decide on the controller thread ---

    def submit(
        self, name: str, location: str, json_conf: str, topology: Any, initial_status: int
    ) -> str:
        if not self.leading:  # first, as Storm's nimbus does: a standby judges nothing
            raise self._not_leader()
        try:
            check_topology_name(name)
            structure = validate_topology(topology)
            conf = validate_topology_conf(json_conf)
            self.inbox.check_finished(location)
            wall = self.wall()
            tid = f"{name}-{uuid.uuid4().hex[:8]}-{int(wall)}"
            inactive = initial_status == T.TopologyInitialStatus.INACTIVE
            self.call(
                Decide(
                    ev.Submit(name, tid, structure, conf, location, inactive, self.clock(), wall)
                )
            )
        except (T.InvalidTopologyException, T.AlreadyAliveException):
            self.inbox.discard(location)  # a refused submit leaves no upload behind
            raise
        return tid

    def kill(self, name: str, wait_secs: int | None) -> None:
        self.call(Decide(ev.Kill(name, wait_secs, self.wall())))

    def activate(self, name: str) -> None:
        self.call(Decide(ev.Activate(name, self.wall())))

    def deactivate(self, name: str) -> None:
        self.call(Decide(ev.Deactivate(name, self.wall())))

    def rebalance(
        self, name: str, wait_secs: int | None, num_workers: int | None, executors: dict | None
    ) -> None:
        self.call(Decide(ev.Rebalance(name, wait_secs, num_workers, executors, self.wall())))

    def set_config(self, name: str, key: str, json_value: str) -> None:
        try:
            value = json.loads(json_value)
        except ValueError:
            value = json_value
        self.call(Decide(ev.SetConfig(name, key, value, self.wall())))

    def set_log_config(self, name: str, changes: dict[str, log_config.Change]) -> None:
        self.call(Decide(ev.SetLogConfig(name, changes, self.wall())))

    def debug(self, name: str, component: str, enable: bool, percentage: float) -> None:
        self.call(Decide(ev.Debug(name, component, enable, percentage, self.wall())))

    def begin_upload(self, owner: str | None = None) -> str:
        if not self.leading:
            self.call(Barrier())  # a lead just won is being taken: an upload waits for it
        if not self.leading:
            raise self._not_leader()
        return self.inbox.begin(self.clock(), owner)

    def _not_leader(self) -> T.IllegalStateException:
        leader = self.leader_of() or "unknown"
        return T.IllegalStateException(msg=f"this nimbus is not the leader; the leader is {leader}")

    # --- Thrift reads: from the published model (a standby re-reads ZooKeeper first) ---

    def read_model(self, refresh: bool = False) -> NimbusModel:
        model = self.model
        if model.leading and not refresh:
            return model
        bases = self.state.read_bases()
        assignments = {t: a for t, a in self.state.read_assignments().items() if t in bases}
        refreshed = ev.Refreshed(bases, assignments, self.state.read_supervisors())
        return handle(model, refreshed)[0]
