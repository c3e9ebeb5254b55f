"""Worker processes: start, watch, stop. One OS process per (topology, port).

Each worker's PID is written under the supervisor's local dir, so a restarted supervisor (or
`squall local` cleaning up) can find and end workers it did not start itself. Each worker
runs in a session of its own (its JVM and Spark's Python workers with it), which is how its
memory is measured and how the whole of it is ended; its output goes through a pipe into
capped rotating files (worker_log.py).
"""

from __future__ import annotations

import contextlib
import json
import logging
import os
import pwd
import signal
import subprocess
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from squall.cgroup_names import worker_group
from squall.processes import kill_pid_file, python_module, terminate
from squall.zk.identity import write_private

from . import cgroup_fs
from .cgroup_fs import Group
from .cgroups import supervisor_name, worker_limits
from .memory import cgroup_memory_error, limit_mb, resident_of
from .sync import WorkerKey, WorkerSpec
from .worker_log import LogPump, RotatingLog, log_caps

log = logging.getLogger("squall.supervisor")

RUN_AS_USER = "supervisor.run.worker.as.user"
SUBMITTER = "topology.submitter.user"
# A worker with a cgroup starts as this shell, which waits for the supervisor's word (on its
# stdin) that it is in its cgroup, then becomes the worker (same pid, stdin /dev/null).
ENTER_GATE = ("/bin/sh", "-c", 'read -r go && exec "$@" </dev/null', "squall-worker")


class WorkerUserError(RuntimeError):
    """supervisor.run.worker.as.user is on and the worker cannot run as its submitter."""


def check_run_as_user(conf: dict[str, Any], euid: int) -> None:
    """At supervisor start: switching users needs root, so refuse at once, not per worker."""
    if conf.get(RUN_AS_USER) and euid != 0:
        raise WorkerUserError(
            f"{RUN_AS_USER} is true but the supervisor does not run as root (euid {euid}): "
            "only root can start workers as their submitters; run it as root or set it false"
        )


def worker_user(conf: dict[str, Any]) -> str | None:
    """The user a worker runs as: None (the supervisor's own) unless run-as-user is on; then
    the topology's submitter, never root (that would give a topology the host)."""
    if not conf.get(RUN_AS_USER):
        return None
    user = conf.get(SUBMITTER)
    if not isinstance(user, str) or not user:
        raise WorkerUserError(
            f"{RUN_AS_USER} is true but the topology conf names no {SUBMITTER} to run as"
        )
    if user == "root":
        raise WorkerUserError(f"{RUN_AS_USER}: refusing to run a topology's worker as root")
    return user


def worker_identity(user: str | None) -> dict[str, Any]:
    """Popen's arguments to run as `user` with its own groups only: `user=` alone would keep
    the supervisor's group (root) and its supplementary groups."""
    if user is None:
        return {}
    try:
        entry = pwd.getpwnam(user)
    except KeyError as exc:
        raise WorkerUserError(f"{RUN_AS_USER}: no user {user!r} on this host") from exc
    if entry.pw_uid == 0:
        raise WorkerUserError(f"{RUN_AS_USER}: refusing to run a topology's worker as root")
    groups = os.getgrouplist(user, entry.pw_gid)
    return {"user": entry.pw_uid, "group": entry.pw_gid, "extra_groups": groups}


def _hand_over(code_dir: Path, uid: int, gid: int) -> None:
    """The worker reads its code and conf as its user: they become that user's."""
    for path in (code_dir, *code_dir.rglob("*")):
        os.chown(path, uid, gid, follow_symlinks=False)


@dataclass
class Worker:
    key: WorkerKey
    process: subprocess.Popen
    started_at: float
    memory_limit_mb: int
    pump: LogPump
    cgroup: Group | None = None  # None: cgroups are off or unusable here


@dataclass(frozen=True)
class Exit:
    """A worker that ended on its own: how, after how long, and its last lines."""

    key: WorkerKey
    returncode: int
    ran_for: float
    tail: str
    cause: str = ""  # what the supervisor knows of why (its cgroup's OOM kill)

    def describe(self) -> str:
        code = self.returncode
        how = f"was killed by signal {-code}" if code < 0 else f"exited with code {code}"
        how += f": {self.cause}," if self.cause else ""
        where = f"worker {self.key[0]}:{self.key[1]}"
        return f"{where} {how} after {self.ran_for:.0f}s; its last lines:\n{self.tail}"


class Launcher:
    def __init__(
        self, local_dir: Path, supervisor_id: str, host: str, conf: dict[str, Any]
    ) -> None:
        self.local_dir = local_dir
        self.supervisor_id = supervisor_id
        self.host = host  # what the supervisor registered: its workers bind only this
        self.conf = conf  # the supervisor's own: log caps and the memory ceiling come from it
        self.pid_dir = local_dir / "workers"
        self.log_dir = local_dir / "logs"
        self.pid_dir.mkdir(parents=True, exist_ok=True)
        self.log_dir.mkdir(parents=True, exist_ok=True)
        self.workers: dict[WorkerKey, Worker] = {}
        name = supervisor_name(supervisor_id, str(local_dir.resolve()))
        self.cgroups = cgroup_fs.for_supervisor(conf, name)

    def kill_strays(self) -> None:
        """End workers left by an earlier run of this supervisor (no duplicates on restart),
        and all their cgroups held (their setsid children too)."""
        for pid_file in self.pid_dir.glob("*.pid"):
            kill_pid_file(pid_file)
        for group in self.cgroups.leftovers() if self.cgroups is not None else ():
            log.info("ending leftover cgroup %s", group.name)
            self._end(group)

    def start(self, spec: WorkerSpec, code_dir: Path, conf: dict[str, Any]) -> None:
        key = (spec.topology_id, spec.port)
        tid, port = key
        identity = worker_identity(worker_user(conf))
        conf_file = code_dir / f"worker-{port}.json"
        write_private(conf_file, json.dumps(conf))  # it may hold the ZooKeeper login
        if identity:
            _hand_over(code_dir, identity["user"], identity["group"])
        limit = limit_mb(
            conf["topology.worker.max.memory.mb"], self.conf["supervisor.worker.max.memory.mb"]
        )
        rotating = RotatingLog(
            self.log_dir / f"worker-{tid}-{port}.log", *log_caps(conf, self.conf)
        )
        group = None
        try:
            if self.cgroups is not None:
                limits = worker_limits(self.conf, conf, limit, len(spec.tasks))
                group = self.cgroups.create(worker_group(tid, port), limits)
            process = self._popen(tid, port, conf_file, code_dir, identity)
        except BaseException:
            rotating.close()
            self._end(group)
            raise
        pump = None
        try:  # from here a failure must not leave a worker nothing tracks (nor its port held)
            if group is not None:
                self._enter(process, group)
            assert process.stdout is not None
            pump = LogPump(process.stdout, rotating)
            pump.start()
            (self.pid_dir / f"{tid}-{port}.pid").write_text(str(process.pid))
        except BaseException:
            _kill_session(process.pid)
            process.wait()
            self._end(group)
            if pump is not None and pump.is_alive():
                pump.join(1)  # it closes the log once the pipe ends
            else:
                rotating.close()
            raise
        self.workers[key] = Worker(key, process, time.monotonic(), limit, pump, group)
        log.info("started worker %s:%d (pid %d) for tasks %s", tid, port, process.pid, spec.tasks)

    def _enter(self, process: subprocess.Popen, group: Group) -> None:
        """Put the worker in its cgroup, then let it run: it waits at ENTER_GATE, before
        any of its own or its topology's code, so nothing it forks starts outside."""
        assert self.cgroups is not None
        if process.stdin is None:  # started without the gate (a test's stand-in worker)
            self.cgroups.enter(group, process.pid)
            return
        with process.stdin:
            self.cgroups.enter(group, process.pid)
            process.stdin.write(b"go\n")

    def _end(self, group: Group | None) -> None:
        """Kill all that is in a worker's cgroup and remove it (None: it has none)."""
        if group is not None and self.cgroups is not None:
            self.cgroups.end(group)

    def _popen(
        self, tid: str, port: int, conf_file: Path, code_dir: Path, identity: dict[str, Any]
    ) -> subprocess.Popen:
        gated = self.cgroups is not None  # it waits to be put in its cgroup (_enter)
        return subprocess.Popen(
            [
                *(ENTER_GATE if gated else ()),
                *python_module("squall.worker"),
                "--conf",
                str(conf_file),
                "--topology-id",
                tid,
                "--supervisor-id",
                self.supervisor_id,
                "--port",
                str(port),
                "--code-dir",
                str(code_dir),
                "--host",
                self.host,
            ],
            stdout=subprocess.PIPE,
            stderr=subprocess.STDOUT,
            stdin=subprocess.PIPE if gated else subprocess.DEVNULL,
            start_new_session=True,
            **identity,
        )

    def stop(self, key: WorkerKey, grace: float = 5) -> None:
        worker = self.workers.pop(key, None)
        if worker is None:
            return
        terminate(worker.process, grace)
        _kill_session(worker.process.pid)
        self._end(worker.cgroup)  # what left its session too
        (self.pid_dir / f"{key[0]}-{key[1]}.pid").unlink(missing_ok=True)
        log.info("stopped worker %s:%d", *key)

    def reap(self, now: float) -> list[Exit]:
        """Workers that ended on their own, removed from the running set with their exit."""
        out = []
        for key, w in sorted(self.workers.items()):
            code = w.process.poll()
            if code is None:
                continue
            _kill_session(w.process.pid)  # so no leftover child holds the pipe open
            cause = self._oom_cause(w) if self.oom_killed_in(w) else ""
            self._end(w.cgroup)  # a setsid child may hold the pipe too
            w.pump.join(1)  # its last lines
            out.append(Exit(key, code, now - w.started_at, w.pump.tail(), cause))
            self.stop(key)
        return out

    def sessions(self) -> dict[WorkerKey, int]:
        """Each running worker's session id (its PID: it leads its own session)."""
        return {k: w.process.pid for k, w in self.workers.items()}

    def resident(self, by_session: dict[int, int]) -> dict[WorkerKey, int]:
        """Resident bytes of each running worker: of all processes in its cgroup where it has
        one (a child that left its session counts), else of its session (`by_session`)."""
        out = {}
        for k, w in self.workers.items():
            if w.cgroup is None or self.cgroups is None:
                out[k] = by_session.get(w.process.pid, 0)
            else:
                out[k] = resident_of(self.cgroups.pids(w.cgroup))
        return out

    def oom_killed_in(self, worker: Worker) -> bool:
        """Whether the kernel killed a process in the worker's cgroup for its memory."""
        return worker.cgroup is not None and bool(
            self.cgroups is not None and self.cgroups.oom_kills(worker.cgroup)
        )

    def _oom_cause(self, worker: Worker) -> str:
        limits = worker_limits(self.conf, {}, worker.memory_limit_mb, 0)
        return cgroup_memory_error(worker.memory_limit_mb, limits.memory_bytes or 0)

    def oom_killed(self) -> list[tuple[WorkerKey, str]]:
        """Running workers one of whose processes the kernel killed for its cgroup's memory
        limit (cgroup v1 kills one process, not the worker): to stop, with the error."""
        return [
            (k, self._oom_cause(w))
            for k, w in sorted(self.workers.items())
            if self.oom_killed_in(w)
        ]

    def memory_limits(self) -> dict[WorkerKey, int]:
        return {k: w.memory_limit_mb for k, w in self.workers.items()}

    def stop_all(self) -> None:
        for key in list(self.workers):
            self.stop(key)
        if self.cgroups is not None:
            self.cgroups.close()


def _kill_session(pid: int) -> None:
    """End what the worker left in its process group (PySpark's JVM, Spark's Python workers):
    a worker killed for memory must not leave its JVM holding the memory."""
    with contextlib.suppress(ProcessLookupError, PermissionError):
        os.killpg(pid, signal.SIGKILL)
