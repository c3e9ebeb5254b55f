"""Nimbus's controller: one thread, one queue, all state changes.

Thrift calls, ZooKeeper watches and timers never touch nimbus state themselves: they put a
job on this queue (`call` waits for the result, `post` does not) and the controller thread
runs jobs one at a time, in order (the design Kafka's controller moved to after its races).
Decisions are delegated to the pure core: `states.transition`, `scheduler.schedule` and the
`HeartbeatCache`; this module carries out their instructions against ZooKeeper and the code
store.
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
from typing import Any

from squall import thrift_api as T
from squall.records import Assignment, StormBase
from squall.structure import ACKER, assign_task_ids
from squall.validation import (
    check_topology_name,
    invalid,
    name_problem,
    validate_topology,
    validate_topology_conf,
)

from . import summaries
from .cluster_state import ClusterState, FencedOut
from .code_store import CodeStore
from .heartbeats import HeartbeatCache, tokens_from_beats
from .inbox import Inbox
from .scheduler import Slot, schedule, start_times
from .states import (
    Activate,
    Deactivate,
    Event,
    IllegalTransition,
    Kill,
    Monitor,
    Reassign,
    Rebalance,
    RemoveTopology,
    ScheduleEvent,
    SetBase,
    Startup,
    TopologyStatus,
    transition,
)
from .store import topology_confs

log = logging.getLogger("squall.nimbus")

Later = Callable[[float, Callable[[], None]], None]  # run a callable after a delay
LeaderOf = Callable[[], str | None]
CLUSTER_ONLY_PREFIXES = (
    "storm.",
    "nimbus.",
    "supervisor.",
)  # "host:port" of the current leader, if any


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
        self.leading = False
        self.clock = clock
        self.wall = wall
        self.jobs: queue.Queue[tuple[str, Callable[[], Any], Future | None]] = queue.Queue()
        self.thread = threading.Thread(target=self._run, name="nimbus-controller", daemon=True)
        self.fenced = threading.Event()
        # The model, owned by the controller thread.
        self.bases: dict[str, StormBase] = {}
        self.assignments: dict[str, Assignment] = {}
        self.tasks: dict[str, dict[int, str]] = {}
        self.supervisors: dict[str, Any] = {}
        self.heartbeats: dict[str, HeartbeatCache] = {}
        self.assigned_at: dict[str, dict[int, float]] = {}
        self.confs: dict[str, dict[str, Any]] = {}  # effective topology confs

    # --- the queue ---

    def start(self) -> None:
        self.thread.start()

    def stop(self) -> None:
        self.jobs.put(("stop", lambda: None, None))

    def call(self, name: str, fn: Callable[..., Any], *args: Any, timeout: float = 120) -> Any:
        """Run `fn(*args)` on the controller thread and return its result (or raise)."""
        future: Future = Future()
        self.jobs.put((name, lambda: fn(*args), future))
        return future.result(timeout=timeout)

    def post(self, name: str, fn: Callable[..., Any], *args: Any) -> None:
        self.jobs.put((name, lambda: fn(*args), None))

    def _run(self) -> None:
        while True:
            name, job, future = self.jobs.get()
            if name == "stop":
                return
            try:
                result = job()
            except FencedOut as exc:
                log.critical("%s; this nimbus stops acting as leader", exc)
                self.fenced.set()
                if future:
                    future.set_exception(exc)
                return
            except Exception as exc:  # noqa: BLE001 - one bad job never stops the loop
                if future:
                    future.set_exception(exc)
                else:
                    log.exception("controller job %s failed", name)
            else:
                if future:
                    future.set_result(result)

    # --- start-up (Storm's prepare) ---

    def become_leader(self) -> None:
        """Storm's prepare, run when this nimbus wins the election: take the epoch, load the
        model, reconcile ZooKeeper with the store, replay the coordinator log, and resume
        every topology (killed ones continue their removal, rebalancing ones their
        rebalance)."""
        self.state.ensure_layout()
        self.state.take_lead()
        stored = self.code.topology_ids()
        storms = set(self.state.storm_ids())
        for tid in sorted(stored - storms):
            log.info("removing code of %s, which has no /storms node", tid)
            self.code.remove(tid)
        for tid in sorted(storms - stored):
            log.info("removing %s, whose code is missing", tid)
            self.state.remove_topology(tid)
        for tid in sorted(set(self.state.assignment_ids()) - storms):
            self.state.remove_orphan(self.state.layout.assignment(tid))
        self._refresh()
        replayed = topology_confs(self.store.log())
        for tid in self.bases:
            self.confs[tid] = replayed.get(tid) or self.code.conf(tid)
        now = self.clock()
        for tid in self.bases:
            placement = self.assignments[tid].task_slots if tid in self.assignments else {}
            self.assigned_at[tid] = {t: now for t in placement}  # fresh grace after failover
        self.leading = True
        log.info("leading with epoch %d", self.state.epoch)
        for tid in sorted(self.bases):
            self._apply(tid, Startup())

    def _refresh(self) -> None:
        """Reload the model from ZooKeeper (a standby answers reads this way)."""
        self.bases = self.state.read_bases()
        self.assignments = {
            t: a for t, a in self.state.read_assignments().items() if t in self.bases
        }
        self.tasks = {t: assign_task_ids(b.component_executors) for t, b in self.bases.items()}
        self.supervisors = self.state.read_supervisors()

    def _log(self, type_: str, key: str, values: dict[str, Any]) -> None:
        """A coordinator-log message, fenced: only the current leader appends, and the
        message carries the epoch so replay can ignore a deposed leader's late writes."""
        self.state.check_lead()
        self.store.append(type_, key, {**values, "epoch": self.state.epoch})

    def _require_leader(self) -> None:
        if not self.leading:
            leader = self.leader_of() or "unknown"
            raise T.IllegalStateException(
                msg=f"this nimbus is not the leader; the leader is {leader}"
            )

    def _read_model(self) -> None:
        if not self.leading:
            self._refresh()

    # --- events from timers and watches ---

    def monitor_all(self) -> None:
        if not self.leading:
            return
        self.supervisors = self.state.read_supervisors()
        for tid in sorted(self.bases):
            self._apply(tid, Monitor())

    def fire(self, tid: str, event: Event) -> None:
        if self.leading and tid in self.bases:
            self._apply(tid, event)

    def cleanup_inbox(self) -> None:
        if not self.leading:
            return
        now = self.clock()
        expired = self.inbox.expire(now, self.conf["nimbus.inbox.jar.expiration.secs"])
        if expired:
            log.info("deleted %d expired uploads", len(expired))
        self.code.expire_downloads(now, self.conf["nimbus.file.copy.expiration.secs"])

    # --- transitions ---

    def _apply(self, tid: str, event: Event) -> None:
        base = self.bases[tid]
        for instruction in transition(base, event, self.wall()):
            if isinstance(instruction, SetBase):
                self.state.write_base(tid, instruction.base)
                self.bases[tid] = instruction.base
            elif isinstance(instruction, Reassign):
                self._reassign(tid, instruction.scratch)
            elif isinstance(instruction, ScheduleEvent):
                delayed = instruction.event
                self.later(
                    instruction.delay_secs,
                    lambda e=delayed: self.post(f"{tid} {type(e).__name__}", self.fire, tid, e),
                )
            elif isinstance(instruction, RemoveTopology):
                self._remove(tid)

    def _user_event(self, name: str, event: Event) -> None:
        self._require_leader()
        tid = self._topology_id(name)
        try:
            self._apply(tid, event)
        except IllegalTransition as exc:
            raise T.IllegalStateException(msg=str(exc)) from exc

    def _remove(self, tid: str) -> None:
        log.info("removing topology %s", tid)
        self.state.remove_topology(tid)
        self.code.remove(tid)
        self._log("kill", tid, {"topology": tid, "removed": True})
        for model in (
            self.bases,
            self.assignments,
            self.tasks,
            self.heartbeats,
            self.assigned_at,
            self.confs,
        ):
            model.pop(tid, None)

    # --- scheduling ---

    def _slots_for(self, tid: str) -> list[Slot]:
        """Ports of live supervisors not used by another topology."""
        taken = {
            slot
            for other, a in self.assignments.items()
            if other != tid
            for slot in a.task_slots.values()
        }
        return [
            (sid, port)
            for sid, info in sorted(self.supervisors.items())
            for port in info.ports
            if (sid, port) not in taken
        ]

    def _reassign(self, tid: str, scratch: bool) -> None:
        base = self.bases[tid]
        now = self.clock()
        tasks = assign_task_ids(base.component_executors)
        if tasks != self.tasks.get(tid):
            self.state.write_tasks(tid, tasks)
            self.tasks[tid] = tasks
        old = self.assignments.get(tid)
        existing = old.task_slots if old else {}
        slots = self._slots_for(tid)
        dead: set[int] = set()
        if scratch:
            placement = schedule(tasks, slots, base.num_workers)
        else:
            beats = self.state.read_beats(tid)
            cache = self.heartbeats.get(tid, HeartbeatCache())
            cache = cache.observe(tokens_from_beats(beats, existing), now)
            self.heartbeats[tid] = cache
            dead = cache.dead_tasks(
                existing,
                self.assigned_at.get(tid, {}),
                now,
                self.conf["nimbus.task.timeout.secs"],
                self.conf["nimbus.task.launch.secs"],
            )
            if dead:
                log.info("%s: tasks %s missed their heartbeats", tid, sorted(dead))
            placement = schedule(tasks, slots, base.num_workers, existing, set(existing) - dead)
        if old and old.task_slots == placement and not dead:
            return
        # A dead task placed back on its own slot is a restart: new start time, new grace.
        restarted = {t for t in placement if existing.get(t) != placement[t] or t in dead}
        kept = {t: s for t, s in existing.items() if t not in restarted}
        starts = start_times(placement, kept, old.task_start_secs if old else {}, int(self.wall()))
        assignment = self._assignment(tid, placement, starts)
        self.state.write_assignment(tid, assignment)
        self.assignments[tid] = assignment
        self._log(
            "assignment",
            tid,
            {"topology": tid, "epoch": assignment.epoch, "moved": sorted(restarted)},
        )
        at = self.assigned_at.setdefault(tid, {})
        for task in restarted:
            at[task] = now
        self.heartbeats[tid] = self.heartbeats.get(tid, HeartbeatCache()).forget(restarted)
        log.info(
            "%s: assigned %d tasks to %d slots", tid, len(placement), len(set(placement.values()))
        )

    def _assignment(self, tid: str, placement: dict[int, Slot], starts: dict[int, int]):
        return Assignment(
            epoch=self.state.epoch,
            code_dir=tid,
            node_host={sid: self.supervisors[sid].host for sid, _ in set(placement.values())},
            task_slots=placement,
            task_start_secs=starts,
        )

    # --- Thrift operations (run on the controller thread via `call`) ---

    def _topology_id(self, name_or_id: str) -> str:
        if name_or_id in self.bases:
            return name_or_id
        for tid, base in self.bases.items():
            if base.name == name_or_id:
                return tid
        raise T.NotAliveException(msg=f"topology {name_or_id!r} is not alive")

    def submit(
        self, name: str, location: str, json_conf: str, topology: Any, initial_status: int
    ) -> str:
        self._require_leader()
        check_topology_name(name)
        if any(b.name == name for b in self.bases.values()):
            raise T.AlreadyAliveException(msg=f"topology {name!r} is already alive")
        structure = validate_topology(topology)
        topo_conf = validate_topology_conf(json_conf)
        num_workers = topo_conf.get("topology.workers", self.conf["topology.workers"])
        if num_workers is None or num_workers < 1:
            raise invalid("topology.workers must be at least 1")
        ackers = topo_conf.get("topology.acker.executors", self.conf["topology.acker.executors"])
        ackers = num_workers if ackers is None else ackers
        if not isinstance(ackers, int) or ackers < 0:
            raise invalid("topology.acker.executors must be a whole number, 0 or more")
        executors = structure.task_counts()
        if ackers:
            executors[ACKER] = ackers
        code = self.inbox.take(location)
        tid = f"{name}-{uuid.uuid4().hex[:8]}-{int(self.wall())}"
        self.state.check_lead()
        self.code.save(tid, name, code, structure, topo_conf, self.wall())
        status = (
            TopologyStatus.INACTIVE
            if initial_status == T.TopologyInitialStatus.INACTIVE
            else TopologyStatus.ACTIVE
        )
        base = StormBase(
            name=name,
            status=status.value,
            launch_time_secs=int(self.wall()),
            num_workers=num_workers,
            component_executors=executors,
            owner=str(topo_conf.get("topology.submitter.user", "")),
        )
        tasks = assign_task_ids(base.component_executors)
        slots = self._slots_for(tid)
        placement = schedule(tasks, slots, num_workers)
        assignment = self._assignment(
            tid, placement, start_times(placement, {}, {}, base.launch_time_secs)
        )
        try:
            self.state.create_topology(tid, base, tasks, assignment)
        except Exception:
            self.code.remove(tid)
            raise
        self.bases[tid] = base
        self.tasks[tid] = tasks
        self.assignments[tid] = assignment
        self.assigned_at[tid] = {t: self.clock() for t in placement}
        self.confs[tid] = topo_conf
        self._log("submit", name, {"topology": tid, "name": name, "conf": topo_conf})
        log.info("submitted %s as %s (%d tasks)", name, tid, len(tasks))
        return tid

    def kill(self, name: str, wait_secs: int | None) -> None:
        wait = self._wait(wait_secs)
        self._user_event(name, Kill(wait))
        tid = self._topology_id(name)
        self._log("kill", tid, {"topology": tid, "wait_secs": wait})

    def activate(self, name: str) -> None:
        self._user_event(name, Activate())

    def deactivate(self, name: str) -> None:
        self._user_event(name, Deactivate())

    def rebalance(
        self, name: str, wait_secs: int | None, num_workers: int | None, executors: dict | None
    ) -> None:
        tid = self._topology_id(name)
        components = self.bases[tid].component_executors
        for component, count in (executors or {}).items():
            if component not in components:
                raise invalid(f"rebalance: {component!r} is not a component of {name!r}")
            if not isinstance(count, int) or count < 1:
                raise invalid(f"rebalance: component {component!r} needs at least 1 executor")
        if num_workers is not None and num_workers < 1:
            raise invalid("rebalance: the number of workers must be at least 1")
        event = Rebalance(
            self._wait(wait_secs), num_workers, tuple(sorted((executors or {}).items()))
        )
        self._user_event(name, event)
        self._log(
            "rebalance",
            tid,
            {"topology": tid, "num_workers": num_workers, "executors": executors or {}},
        )

    def set_config(self, name: str, key: str, json_value: str) -> None:
        """`squall config set`: a set-config message in the coordinator log that takes
        effect: topology.workers rebalances at once; other settings reach workers as they
        (re)start."""
        self._require_leader()
        tid = self._topology_id(name)
        try:
            value = json.loads(json_value)
        except ValueError:
            value = json_value
        if key.startswith(CLUSTER_ONLY_PREFIXES):
            raise invalid(f"{key} is a cluster setting; it cannot be set for one topology")
        checked = validate_topology_conf(json.dumps({key: value}))
        if key == "topology.workers" and value < 1:
            raise invalid("topology.workers must be at least 1")
        conf = {**self.confs.get(tid, {}), **checked}
        self._log("set-config", key, {"topology": tid, "value": value})
        self.confs[tid] = conf
        self.state.check_lead()
        self.code.update_conf(tid, conf)
        if key == "topology.workers":
            self.rebalance(name, 0, value, None)

    def _wait(self, wait_secs: int | None) -> int:
        if wait_secs is None:
            return self.conf["topology.message.timeout.secs"]
        if wait_secs < 0:
            raise invalid("wait_secs must not be negative")
        return wait_secs

    def begin_upload(self) -> str:
        self._require_leader()
        return self.inbox.begin(self.clock())

    def upload_chunk(self, location: str, chunk: bytes) -> None:
        self.inbox.append(location, chunk)

    def finish_upload(self, location: str) -> None:
        self.inbox.finish(location)

    def begin_download(self, name: str) -> str:
        return self.code.begin_download(name, self.clock())

    def download_chunk(self, download_id: str) -> bytes:
        return self.code.read_chunk(download_id, self.clock())

    def topology_conf(self, name: str) -> str:
        self._read_model()
        tid = self._topology_id(name)
        return json.dumps(self.confs.get(tid) or self.code.conf(tid))

    def topology_structure(self, name: str):
        self._read_model()
        return self.code.structure(self._topology_id(name))

    def is_name_allowed(self, name: str) -> bool:
        self._read_model()
        return name_problem(name) is None and all(b.name != name for b in self.bases.values())

    def cluster_info(self, nimbuses: list[Any]) -> Any:
        self._read_model()
        return summaries.cluster_summary(
            self.bases, self.assignments, self.tasks, self.supervisors, nimbuses, self.wall()
        )

    def topology_info(self, name: str) -> Any:
        self._read_model()
        tid = self._topology_id(name)
        return summaries.topology_info(
            tid,
            self.bases[tid],
            self.assignments.get(tid),
            self.tasks.get(tid, {}),
            self.state.read_beats(tid),
            self.state.read_errors(tid),
            self.wall(),
        )
