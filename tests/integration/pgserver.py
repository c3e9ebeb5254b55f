"""A private PostgreSQL server on a free loopback port, for the store's tests. Debian's
postgresql package provides the binaries; as root the server runs as the `postgres` user
(PostgreSQL refuses to run as root). Stopped by pg_ctl and its data removed afterwards."""

from __future__ import annotations

import glob
import os
import shutil
import subprocess
import tempfile

from squall.local import wait_for
from squall.zk.server import free_port


def _bin(name: str) -> str:
    found = sorted(glob.glob(f"/usr/lib/postgresql/*/bin/{name}"))
    if not found:
        raise RuntimeError("PostgreSQL is not installed (make system-deps installs it)")
    return found[-1]


class PostgresServer:
    def __init__(self) -> None:
        self.port = free_port()
        self.directory = tempfile.mkdtemp(prefix="squall-pg-")
        self.as_root = os.geteuid() == 0

    def _run(self, *args: str) -> subprocess.CompletedProcess:
        command = ["runuser", "-u", "postgres", "--", *args] if self.as_root else list(args)
        return subprocess.run(command, capture_output=True, text=True, timeout=120)

    def start(self) -> PostgresServer:
        if self.as_root:
            shutil.chown(self.directory, "postgres")
        data = os.path.join(self.directory, "data")
        init = self._run(_bin("initdb"), "-D", data, "-A", "trust", "-U", "postgres")
        if init.returncode:
            raise RuntimeError(f"initdb failed: {init.stderr}")
        options = f"-p {self.port} -k {self.directory} -c listen_addresses=127.0.0.1"
        log = os.path.join(self.directory, "server.log")
        started = self._run(_bin("pg_ctl"), "-D", data, "-l", log, "-o", options, "-w", "start")
        if started.returncode:
            raise RuntimeError(f"pg_ctl start failed: {started.stderr}")
        wait_for(self._ready, 30, "PostgreSQL to accept connections")
        return self

    def _ready(self) -> bool:
        import psycopg

        with psycopg.connect(self.url.replace("postgresql+psycopg", "postgresql")):
            return True

    @property
    def url(self) -> str:
        return f"postgresql+psycopg://postgres@127.0.0.1:{self.port}/postgres"

    def stop(self) -> None:
        data = os.path.join(self.directory, "data")
        if os.path.isdir(data):
            self._run(_bin("pg_ctl"), "-D", data, "-m", "immediate", "-w", "stop")
        shutil.rmtree(self.directory, ignore_errors=True)
