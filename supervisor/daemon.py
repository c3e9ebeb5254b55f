"""`squall supervisor`: registers this host's slots and keeps its workers in line with the
assignments in ZooKeeper.

ZooKeeper watches only wake the sync loop; one thread does every sync, so launches and kills
never race. The loop also runs every supervisor.monitor.frequency.secs to restart workers that
exited (after a back-off when they keep dying) and to stop workers past their memory limit.
Downloading and unpacking code, and fetching the conf a worker starts with, never run on the
loop (code_fetcher.py, conf_fetcher.py): one topology's bad package or slow download shows as
that topology's error and delays no other topology. Each port is a slot, a pure state
machine (slot.py): `sync` turns what it reads (assignments, exits, beats, memory, ended
downloads) into the slots' events and carries out their instructions (start, kill, report,
fetch, remove code). A worker's start is in worker_starts.py, the supervisor's id and start
checks in identity.py.
"""

from __future__ import annotations

import contextlib
import functools
import logging
import os
import shutil
import signal
import socket
import threading
import time
from collections.abc import Iterable
from pathlib import Path
from typing import Any

from kazoo.exceptions import NodeExistsError, NoNodeError
from kazoo.protocol.states import KazooState

from squall import __version__
from squall.client import nimbus_address
from squall.records import Assignment, SupervisorInfo, encode
from squall.security.certificate_check import ClientCertificateError, TlsRefusedError
from squall.security.certificates import SUPERVISOR
from squall.security.mode import security_on
from squall.spark_connect import ENABLE as SPARK_CONNECT
from squall.spark_connect import ServerState
from squall.zk import connection as zk_mod
from squall.zk.identity import HOST_KEY, ensure_host_identity, role_identities

from . import slot as sl
from .assignment_watch import AssignmentWatch
from .backoff import next_wake
from .capacity import capacity
from .code_fetcher import CodeFetcher, fetch_code
from .conf_fetcher import ConfFetcher, fetch_conf
from .error_reports import report_error
from .health_check import HealthWatch, NodeUnhealthy, node_verdict
from .identity import (
    DuplicateSupervisorError,
    check_credentials,
    hold_local_dir,
    supervisor_id,
)
from .launcher import RUN_AS_USER, Launcher, check_run_as_user
from .spark_server import SparkConnectServer, readiness
from .sync import accept_epochs, by_port, desired_workers
from .worker_checks import beat_seqs, over_memory
from .worker_starts import start_worker

log = logging.getLogger("squall.supervisor")


class Supervisor:
    def __init__(self, conf: dict[str, Any]) -> None:
        self.local_dir = Path(conf["storm.local.dir"]).resolve() / "supervisor"
        self.id = supervisor_id(conf, self.local_dir)
        if role_identities(conf):  # this host's own login, beside the role's
            conf = {**conf, HOST_KEY: ensure_host_identity(self.local_dir, self.id)}
        if conf.get(RUN_AS_USER):
            # a shared server runs every topology's Spark code as the supervisor's user:
            # with workers run as their submitters, each keeps its own JVM instead
            conf = {**conf, SPARK_CONNECT: False}
        self.conf = conf
        self.host = conf["storm.local.hostname"] or socket.gethostname()
        self.ports = sorted(conf["supervisor.slots.ports"])
        self.capacity = capacity(conf)  # a conf that names a capacity twice stops here
        self.unhealthy: str | None = None  # why the node failed its health checks
        self.layout = zk_mod.layout(conf)
        check_run_as_user(conf, os.geteuid())
        self.launcher = Launcher(self.local_dir, self.id, self.host, conf)
        self.code_root = self.local_dir / "stormdist"
        self.wake = threading.Event()
        self.fetcher = CodeFetcher(self.code_root, functools.partial(fetch_code, conf), self.wake)
        self.confs = ConfFetcher(functools.partial(fetch_conf, conf), self.wake)
        timeouts = sl.Timeouts(
            conf["supervisor.worker.timeout.secs"], conf["supervisor.worker.start.timeout.secs"]
        )
        self.slots = {port: sl.empty_slot(port, timeouts) for port in self.ports}
        self.stopping = threading.Event()
        self.needs_register = threading.Event()
        self.epochs: dict[str, int] = {}
        self.accepted: dict[str, Assignment] = {}
        self.refused: set[str] = set()
        self.unreadable_reported: dict[str, str] = {}
        self.refused_since = 0.0  # when registering again was first refused (0: it was not)
        self.zk_away = False  # ZooKeeper suspended or lost, not yet back: no beat can change
        self.zk_back = float("-inf")  # when it last came back
        self.started = int(time.time())
        self.spark_server: SparkConnectServer | None = None
        self.spark_connect = readiness(None)  # shown in the registration
        self.spark_changed = threading.Event()  # the registration must say a new state
        self.zk = zk_mod.connect(conf, "supervisor")
        self.worker_auth = zk_mod.worker_auth_conf(conf)
        full_every = conf["supervisor.assignments.full.read.secs"]
        self.assignment_watch = AssignmentWatch(self.zk, self.layout, full_every, self.wake)

    # --- registration ---

    def _info(self) -> SupervisorInfo:
        return SupervisorInfo(
            self.host,
            self.ports,
            self.started,
            __version__,
            memory_capacity_mb=self.capacity.memory_mb,
            cpu_capacity=self.capacity.cpu,
            generic_resources=self.capacity.generic,
            spark_connect=self.spark_connect,
        )

    def register(self) -> None:
        path = self.layout.supervisor(self.id)
        try:
            self.zk.create(path, encode(self._info()), ephemeral=True, makepath=True)
        except NodeExistsError as exc:
            stat = self.zk.exists(path)
            if stat is not None and stat.ephemeralOwner == self.zk.client_id[0]:
                return  # ours: a create whose answer was lost to a dropped connection
            raise DuplicateSupervisorError(
                f"supervisor id {self.id!r} is already registered in ZooKeeper: another "
                "supervisor with this id is running (set supervisor.id to a unique value)"
            ) from exc

    def _await_nimbus_trust(self) -> bool:
        """Registered slots get work this supervisor can only run if nimbus lets it fetch
        code: with a certificate nimbus refuses (another CA, expired), it took slots and its
        topologies stalled without a word. So it registers only once nimbus accepts it (a
        nimbus that is not up yet is no reason to wait: that is ZooKeeper's business), and
        says why every supervisor.heartbeat.frequency.secs until then. False: stopped."""
        if not security_on(self.conf):
            return True
        every = self.conf["supervisor.heartbeat.frequency.secs"]
        while not self.stopping.is_set():
            try:
                nimbus_address(self.conf, identity=SUPERVISOR)
                return True
            except (ClientCertificateError, TlsRefusedError) as exc:
                log.error(
                    "not registering, so taking no slots: nimbus will not accept this "
                    "supervisor's certificate: %s (checked again in %d s)",
                    exc,
                    every,
                )
            except Exception as exc:  # noqa: BLE001 - nimbus down or starting: register
                log.info("nimbus not reachable yet (%s); registering", exc)
                return True
            self.stopping.wait(every)
        return False

    def _on_zk_state(self, state: str) -> None:
        """On kazoo's thread: only flags for the sync loop."""
        if state == KazooState.CONNECTED:
            self.zk_away, self.zk_back = False, time.monotonic()
            if self.needs_register.is_set():
                self.wake.set()
            return
        self.zk_away = True  # SUSPENDED or LOST: no worker's beat can change now
        if state == KazooState.LOST:
            self.needs_register.set()
            self.assignment_watch.read_all_next()  # a watch may have been missed meanwhile

    def _on_spark(self, state: ServerState) -> None:
        """On the server's thread: the sync loop rewrites the registration."""
        self.spark_connect = readiness(state)
        self.spark_changed.set()
        self.wake.set()

    def _rewrite_registration(self) -> None:
        """The node says the Spark Connect server's state; a node gone with a lost session
        is created again, with it, by _register_again."""
        self.spark_changed.clear()
        with contextlib.suppress(NoNodeError):
            self.zk.set(self.layout.supervisor(self.id), encode(self._info()))

    # --- the sync loop ---

    def run(self) -> None:
        lock = hold_local_dir(self.local_dir)  # before anything here kills a process
        try:
            self.launcher.kill_strays()
            why = node_verdict(self.conf)  # a failing node takes no slot, starts no worker
            if why is not None:
                self._unhealthy(why)
                return
            HealthWatch(self.conf, self.stopping, self._unhealthy).start()
            if self.conf.get(SPARK_CONNECT):
                name = f"squall-{self.id}"
                self.spark_server = SparkConnectServer(self.conf, name, on_state=self._on_spark)
                self.spark_server.start()
            layout_dirs = [self.layout.assignments, self.layout.supervisors]
            if not zk_mod.await_paths(self.zk, layout_dirs, self.stopping):  # nimbus makes them
                return
            if not self._await_nimbus_trust():
                return
            self.register()
            self.zk.add_listener(self._on_zk_state)
            self.assignment_watch.start()
            log.info("supervisor %s on %s with slots %s", self.id, self.host, self.ports)
            print(f"supervisor {self.id} registered with slots {self.ports}", flush=True)
            self._loop()
        finally:
            self.launcher.stop_all()
            if self.spark_server:
                self.spark_server.stop()
            self.zk.stop()
            self.zk.close()
            os.close(lock)

    def _loop(self) -> None:
        while not self.stopping.is_set():
            period = self.conf["supervisor.monitor.frequency.secs"]
            retries = [
                *sl.retries(self.slots.values()),
                *self.fetcher.retries.values(),
                *self.confs.retries.values(),
            ]
            self.wake.wait(next_wake(retries, time.monotonic(), period))
            self.wake.clear()
            if self.stopping.is_set():
                break
            try:
                self.sync()
            except Exception:  # noqa: BLE001 - the loop must outlive one bad sync
                log.exception("sync failed; retrying")

    def stop(self) -> None:
        self.stopping.set()
        self.wake.set()

    def _unhealthy(self, why: str) -> None:
        """The node failed its health checks (health_check.py): stop, workers first."""
        log.error("node health check failed, stopping the workers and the supervisor: %s", why)
        self.unhealthy = why
        self.stop()

    def sync(self) -> None:
        if self.needs_register.is_set():  # the session was lost: this node went with it
            self._register_again(time.monotonic())
        elif self.spark_changed.is_set():
            self._rewrite_registration()
        # only what changed is read; a refused assignment is judged again each time (the
        # epoch it waits for may have come)
        if self.assignment_watch.refresh(time.monotonic()) or self.refused:
            self._accept(self.assignment_watch.assignments)
            unreadable = dict(self.assignment_watch.unreadable)
            for tid, why in sorted(unreadable.items() - self.unreadable_reported.items()):
                self._report(tid, None, f"cannot read its assignment, kept the last one: {why}")
            self.unreadable_reported = unreadable  # each reason once, not every sync
        desired = desired_workers(self.id, self.accepted, self.ports)
        now = time.monotonic()
        for tid, error in self.fetcher.collect(now):
            delay = self.fetcher.retries[tid].not_before - now
            log.warning("cannot use the code of %s (retrying in %.0fs): %s", tid, delay, error)
            self._report(tid, None, f"cannot use the topology's code: {error}")
        for tid, error in self.confs.collect(now):
            delay = self.confs.retries[tid].not_before - now
            log.warning("cannot fetch the conf of %s (retrying in %.0fs): %s", tid, delay, error)
            self._report(tid, None, f"cannot fetch the topology's conf: {error}")
        tids = {k[0] for k in desired}
        self.fetcher.forget(tids)
        self.confs.forget(tids)
        self._sync_slots(by_port(desired), now)

    def _sync_slots(self, desired: dict[int, Any], now: float) -> None:
        """Each slot's events of this pass, in an order that matters: the assignment first
        (an exit is judged against it), then exits, beats and memory; waiting slots hear of
        their code and confs before the tick asks for them again (a conf just fetched would
        be fetched twice), and again after it (a back-off the tick ended starts now)."""
        for port in self.ports:
            self._feed(port, sl.Assigned(desired.get(port)), now)
        for ended in self.launcher.reap(now):
            exited = sl.Exited(ended.returncode, ended.ran_for, ended.describe())
            self._feed(ended.key[1], exited, now)
        keys = [k for s in self.slots.values() if (k := sl.worker_key(s)) is not None]
        for key, seq in beat_seqs(self.zk, self.layout, self.id, keys).items():
            self._feed(key[1], sl.BeatSeen(seq), now)
        for key, text in over_memory(self.launcher):
            self._feed(key[1], sl.OverMemory(text), now)
        self._deliver(now)
        tick = sl.Tick(self.zk_away, self.zk_back)
        for port in self.ports:
            self._feed(port, tick, now)
        self._deliver(now)
        present = [p.name for p in self.code_root.glob("*")]
        for remove in sl.code_to_remove(self.slots.values(), present, self._fetching):
            shutil.rmtree(self.code_root / remove.topology_id, ignore_errors=True)

    def _deliver(self, now: float) -> None:
        """Tell each waiting slot its topology's code is ready, then its newest conf."""
        for port, slot in list(self.slots.items()):
            if slot.state is not sl.SlotState.WAITING_FOR_CODE or slot.desired is None:
                continue
            if self.fetcher.ready(slot.desired.topology_id):
                self._feed(port, sl.CodeReady(), now)
        for port, slot in list(self.slots.items()):
            fetched = self.confs.fetched.get(slot.desired.topology_id) if slot.desired else None
            if slot.state is sl.SlotState.WAITING_FOR_CONF and fetched is not None:
                self._feed(port, sl.ConfFetched(fetched.began, fetched.conf), now)

    def _fetching(self, tid: str) -> bool:
        return self.fetcher.busy(tid) or self.confs.busy(tid)

    def _feed(self, port: int, event: sl.Event, now: float) -> None:
        self.slots[port], instructions = sl.step(self.slots[port], event, now)
        self._execute(port, instructions, now)

    def _execute(self, port: int, instructions: Iterable[sl.Instruction], now: float) -> None:
        """Carry out a slot's instructions in order; a start or a kill answers the slot."""
        for i in instructions:
            match i:
                case sl.FetchCode():
                    self.fetcher.request([i.topology_id], now)
                case sl.FetchConf():
                    code_dir = self.fetcher.code_dir(i.topology_id)
                    self.confs.request({i.topology_id: code_dir}, now)
                case sl.StartWorker():
                    self._start(port, i, now)
                case sl.KillWorker():
                    self.launcher.stop(i.key, grace=i.grace)
                    self._feed(port, sl.Killed(), now)
                case sl.ReportError():
                    self._report(i.topology_id, i.port, i.text)
                case sl.Log():
                    log.log(i.level, "%s", i.text)
                case _:
                    raise TypeError(f"not a slot instruction: {i!r}")

    def _start(self, port: int, start: sl.StartWorker, now: float) -> None:
        """One worker's start; its failure (a user it cannot run as) is the slot's, and
        never keeps the other topologies' workers from starting."""
        tid = start.spec.topology_id
        try:
            code_dir = self.fetcher.code_dir(tid)
            start_worker(
                self.launcher, start.spec, code_dir, self.conf, start.conf, self.worker_auth
            )
        except Exception as exc:  # noqa: BLE001 - one topology must not stop the others
            self._feed(port, sl.StartFailed(str(exc)), now)

    def _report(self, tid: str, port: int | None, text: str) -> None:
        """Record `text` as the topology's error, unless the topology is gone: its /errors
        subtree was removed with it and must not be recreated as an orphan."""
        if tid not in self.accepted:
            return
        report_error(self.zk, self.layout.errors(tid), text, self.host, port)

    def _register_again(self, now: float) -> None:
        """After a lost session. The old session's node can outlive it for a moment: a
        refusal is retried, while the workers go on, for two session timeouts; one that
        lasts longer is another live supervisor with this id, and this one stops."""
        try:
            self.register()
        except DuplicateSupervisorError as exc:
            self.refused_since = self.refused_since or now
            patience = 2 * self.conf["storm.zookeeper.session.timeout"] / 1000
            if now - self.refused_since <= patience:
                log.warning("cannot register again yet (retrying): %s", exc)
                return
            log.error("%s; stopping", exc)
            self.stop()
            return
        self.refused_since = 0.0
        self.needs_register.clear()

    def _accept(self, assignments: dict[str, Assignment]) -> None:
        """The assignments to act on, checked against the current epoch (sync.accept_epochs)."""
        current = zk_mod.read_epoch(self.zk, self.layout)
        accepted = accept_epochs(assignments, current, self.epochs, self.accepted)
        for tid in sorted(set(accepted.refused) - self.refused):
            log.warning(
                "ignoring the assignment of %s: epoch %d is not one nimbus wrote (current %s, "
                "newest seen %s)",
                tid,
                assignments[tid].epoch,
                current,
                self.epochs.get(tid),
            )
        self.accepted, self.epochs = accepted.assignments, accepted.seen
        self.refused = set(accepted.refused)


def run_supervisor(conf: dict[str, Any]) -> None:
    check_credentials(conf)
    supervisor = Supervisor(conf)

    def shutdown(signum: int, _frame: Any) -> None:
        log.info("supervisor stopping (signal %d)", signum)
        supervisor.stop()

    signal.signal(signal.SIGTERM, shutdown)
    signal.signal(signal.SIGINT, shutdown)
    supervisor.run()
    if supervisor.unhealthy is not None:
        raise NodeUnhealthy(f"the node failed its health checks: {supervisor.unhealthy}")
