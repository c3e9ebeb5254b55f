"""`squall supervisor`: registers this host's slots and keeps its workers in line with the
assignments in ZooKeeper.

ZooKeeper watches only wake the sync loop; one thread does every sync, so launches and kills
never race. The loop also runs every supervisor.monitor.frequency.secs to restart workers that
exited.
"""

from __future__ import annotations

import json
import logging
import shutil
import signal
import socket
import threading
import time
import uuid
from pathlib import Path
from typing import Any

from kazoo.exceptions import NodeExistsError
from kazoo.protocol.states import KazooState

from squall import __version__
from squall import zk as zk_mod
from squall.client import download, nimbus_address, nimbus_client
from squall.code_package import CODE_FILE, CONF_FILE, STRUCTURE_FILE, unpack
from squall.records import Assignment, SupervisorInfo, WorkerBeat, encode

from .launcher import Launcher
from .sync import BeatTracker, WorkerSpec, accept_epochs, desired_workers, plan

log = logging.getLogger("squall.supervisor")


class DuplicateSupervisorError(RuntimeError):
    """Another live supervisor is registered under the same id."""


def supervisor_id(conf: dict[str, Any], local_dir: Path) -> str:
    """The configured id, or one generated on first start and kept in the local dir."""
    if conf["supervisor.id"]:
        return conf["supervisor.id"]
    id_file = local_dir / "id"
    if id_file.exists():
        return id_file.read_text().strip()
    new_id = f"{socket.gethostname()}-{uuid.uuid4().hex[:8]}"
    local_dir.mkdir(parents=True, exist_ok=True)
    id_file.write_text(new_id)
    return new_id


class Supervisor:
    def __init__(self, conf: dict[str, Any]) -> None:
        self.conf = conf
        self.local_dir = Path(conf["storm.local.dir"]).resolve() / "supervisor"
        self.id = supervisor_id(conf, self.local_dir)
        self.host = conf["storm.local.hostname"] or socket.gethostname()
        self.ports = sorted(conf["supervisor.slots.ports"])
        self.layout = zk_mod.layout(conf)
        self.launcher = Launcher(self.local_dir, self.id, self.host)
        self.code_root = self.local_dir / "stormdist"
        self.wake = threading.Event()
        self.stopping = threading.Event()
        self.needs_register = threading.Event()
        self.epochs: dict[str, int] = {}
        self.accepted: dict[str, Assignment] = {}
        self.refused: set[str] = set()
        self.beats = BeatTracker({})
        self.watched: set[str] = set()
        self.started = int(time.time())
        self.zk = zk_mod.connect(conf, "supervisor")
        self.worker_auth = zk_mod.worker_auth_conf(conf)

    # --- registration ---

    def register(self) -> None:
        info = SupervisorInfo(self.host, self.ports, self.started, __version__)
        try:
            self.zk.create(
                self.layout.supervisor(self.id), encode(info), ephemeral=True, makepath=True
            )
        except NodeExistsError as exc:
            raise DuplicateSupervisorError(
                f"supervisor id {self.id!r} is already registered in ZooKeeper: another "
                "supervisor with this id is running (set supervisor.id to a unique value)"
            ) from exc

    def _on_zk_state(self, state: str) -> None:
        if state == KazooState.LOST:
            self.needs_register.set()
        elif state == KazooState.CONNECTED and self.needs_register.is_set():
            self.wake.set()

    # --- watches ---

    def _watch_assignments(self) -> None:
        @self.zk.ChildrenWatch(self.layout.assignments)
        def _children(children: list[str]) -> None:
            for tid in set(children) - self.watched:
                self.watched.add(tid)
                self.zk.DataWatch(self.layout.assignment(tid))(self._data_changed)
            self.wake.set()

    def _data_changed(self, _data: Any, _stat: Any, _event: Any = None) -> bool | None:
        self.wake.set()
        return None

    # --- the sync loop ---

    def run(self) -> None:
        self.launcher.kill_strays()
        layout_dirs = [self.layout.assignments, self.layout.supervisors]
        if not zk_mod.await_paths(self.zk, layout_dirs, self.stopping):  # nimbus makes them
            self.zk.stop()
            self.zk.close()
            return
        self.register()
        self.zk.add_listener(self._on_zk_state)
        self._watch_assignments()
        log.info("supervisor %s on %s with slots %s", self.id, self.host, self.ports)
        print(f"supervisor {self.id} registered with slots {self.ports}", flush=True)
        try:
            while not self.stopping.is_set():
                self.wake.wait(self.conf["supervisor.monitor.frequency.secs"])
                self.wake.clear()
                if self.stopping.is_set():
                    break
                try:
                    self.sync()
                except Exception:  # noqa: BLE001 - the loop must outlive one bad sync
                    log.exception("sync failed; retrying")
        finally:
            self.launcher.stop_all()
            self.zk.stop()
            self.zk.close()

    def stop(self) -> None:
        self.stopping.set()
        self.wake.set()

    def sync(self) -> None:
        if self.needs_register.is_set():
            self.register()
            self.needs_register.clear()
        assignments = zk_mod.read_records(self.zk, Assignment, self.layout.assignments)
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
        desired = desired_workers(self.id, self.accepted, self.ports)
        for key in self.launcher.exited():
            log.warning("worker %s:%d exited; it will be restarted if still assigned", *key)
            self.launcher.stop(key)
        for key in self._hung_workers():
            log.warning("worker %s:%d stopped heartbeating; restarting it", *key)
            self.launcher.stop(key, grace=1)
            self.beats.forget(key)
        todo = plan(desired, self.launcher.running())
        for key in todo.stop:
            self.launcher.stop(key)
        for spec in todo.start:
            self._start_worker(spec)
        for tid in {p.name for p in self.code_root.glob("*")} - {k[0] for k in desired}:
            if not any(k[0] == tid for k in self.launcher.running()):
                shutil.rmtree(self.code_root / tid, ignore_errors=True)

    def _start_worker(self, spec: WorkerSpec) -> None:
        """One worker's start; its failure (e.g. an assignment naming a topology nimbus has no
        code for) is logged and retried at the next sync, and never keeps the other
        topologies' workers from starting."""
        try:
            code_dir = self._ensure_code(spec.topology_id)
            topology_conf = self._fetch_conf(spec.topology_id, code_dir)
            self.launcher.start(spec, code_dir, {**self.conf, **topology_conf, **self.worker_auth})
        except Exception as exc:  # noqa: BLE001 - one topology must not stop the others
            log.warning("cannot start worker %s:%d: %s", spec.topology_id, spec.port, exc)

    def _hung_workers(self) -> list:
        seqs = {}
        for tid, port in self.launcher.running():
            path = self.layout.taskbeat(tid, self.id, port)
            try:
                beat = zk_mod.read_record(self.zk, WorkerBeat, path)
            except ValueError as exc:
                log.warning("skipping a heartbeat: %s", exc)
                beat = None
            if beat is not None:
                seqs[(tid, port)] = beat.seq
        now = time.monotonic()
        self.beats.observe(seqs, now)
        return self.beats.hung(
            self.launcher.started(),
            now,
            self.conf["supervisor.worker.timeout.secs"],
            self.conf["supervisor.worker.start.timeout.secs"],
        )

    def _ensure_code(self, tid: str) -> Path:
        """Download the topology's code and structure from nimbus once: they never change."""
        code_dir = self.code_root / tid
        done = code_dir / ".complete"
        if done.exists():
            return code_dir
        code_dir.mkdir(parents=True, exist_ok=True)
        with nimbus_client(*nimbus_address(self.conf)) as client:
            for name in (CODE_FILE, STRUCTURE_FILE):
                download(client, f"{tid}/{name}", code_dir / name)
        unpack(code_dir / CODE_FILE, code_dir / "code")
        done.touch()
        return code_dir

    def _fetch_conf(self, tid: str, code_dir: Path) -> dict[str, Any]:
        """The topology conf as nimbus has it now, fetched for every worker start, so
        settings changed with `squall config set` reach workers as they (re)start."""
        with nimbus_client(*nimbus_address(self.conf)) as client:
            download(client, f"{tid}/{CONF_FILE}", code_dir / CONF_FILE)
        return json.loads((code_dir / CONF_FILE).read_text())


def run_supervisor(conf: dict[str, Any]) -> None:
    supervisor = Supervisor(conf)

    def shutdown(signum: int, _frame: Any) -> None:
        log.info("supervisor stopping (signal %d)", signum)
        supervisor.stop()

    signal.signal(signal.SIGTERM, shutdown)
    signal.signal(signal.SIGINT, shutdown)
    supervisor.run()
