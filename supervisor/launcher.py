"""Worker processes: start, watch, stop. One OS process per (topology, port).

Each worker's PID is written under the supervisor's local dir, so a restarted supervisor (or
`squall local` cleaning up) can find and end workers it did not start itself.
"""

from __future__ import annotations

import json
import logging
import subprocess
import sys
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from squall.processes import kill_pid_file, terminate
from squall.zk_identity import write_private

from .sync import WorkerKey, WorkerSpec

log = logging.getLogger("squall.supervisor")


@dataclass
class Worker:
    key: WorkerKey
    identity: Any  # the WorkerSpec identity it was started from
    process: subprocess.Popen
    started_at: float


class Launcher:
    def __init__(self, local_dir: Path, supervisor_id: str, host: str) -> None:
        self.local_dir = local_dir
        self.supervisor_id = supervisor_id
        self.host = host  # what the supervisor registered: its workers bind only this
        self.pid_dir = local_dir / "workers"
        self.log_dir = local_dir / "logs"
        self.pid_dir.mkdir(parents=True, exist_ok=True)
        self.log_dir.mkdir(parents=True, exist_ok=True)
        self.workers: dict[WorkerKey, Worker] = {}

    def kill_strays(self) -> None:
        """End workers left by an earlier run of this supervisor (no duplicates on restart)."""
        for pid_file in self.pid_dir.glob("*.pid"):
            kill_pid_file(pid_file)

    def start(self, spec: WorkerSpec, code_dir: Path, conf: dict[str, Any]) -> None:
        key = (spec.topology_id, spec.port)
        tid, port = key
        conf_file = code_dir / f"worker-{port}.json"
        write_private(conf_file, json.dumps(conf))  # it may hold the ZooKeeper login
        log_file = (self.log_dir / f"worker-{tid}-{port}.log").open("ab")
        process = subprocess.Popen(
            [
                sys.executable,
                "-m",
                "squall.worker",
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
            stdout=log_file,
            stderr=subprocess.STDOUT,
            stdin=subprocess.DEVNULL,
            start_new_session=True,
        )
        log_file.close()
        (self.pid_dir / f"{tid}-{port}.pid").write_text(str(process.pid))
        self.workers[key] = Worker(key, spec.identity, process, time.monotonic())
        log.info("started worker %s:%d (pid %d) for tasks %s", tid, port, process.pid, spec.tasks)

    def stop(self, key: WorkerKey, grace: float = 5) -> None:
        worker = self.workers.pop(key, None)
        if worker is None:
            return
        terminate(worker.process, grace)
        (self.pid_dir / f"{key[0]}-{key[1]}.pid").unlink(missing_ok=True)
        log.info("stopped worker %s:%d", *key)

    def exited(self) -> list[WorkerKey]:
        return [k for k, w in self.workers.items() if w.process.poll() is not None]

    def started(self) -> dict[WorkerKey, float]:
        return {k: w.started_at for k, w in self.workers.items()}

    def running(self) -> dict[WorkerKey, Any]:
        return {k: w.identity for k, w in self.workers.items()}

    def stop_all(self) -> None:
        for key in list(self.workers):
            self.stop(key)
