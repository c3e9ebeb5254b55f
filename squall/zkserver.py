"""A real ZooKeeper server (Debian's `zookeeper` package) on a loopback port, for `squall
local` and the integration tests. Admin server off; stopped by PID."""

from __future__ import annotations

import socket
import subprocess
import time
from pathlib import Path

from squall.processes import terminate

ZK_CLASSPATH = "/usr/share/java/zookeeper.jar"
MAIN = "org.apache.zookeeper.server.ZooKeeperServerMain"


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


class ZooKeeperServer:
    def __init__(self, directory: Path, port: int | None = None, tick_ms: int = 500) -> None:
        self.directory = directory
        self.port = port or free_port()
        self.tick_ms = tick_ms
        self.process: subprocess.Popen | None = None

    def start(self, timeout: float = 60) -> ZooKeeperServer:
        if not Path(ZK_CLASSPATH).exists():
            raise RuntimeError(
                f"{ZK_CLASSPATH} not found: install Debian's zookeeper package (make system-deps)"
            )
        data = self.directory / "data"
        data.mkdir(parents=True, exist_ok=True)
        cfg = self.directory / "zoo.cfg"
        cfg.write_text(
            f"tickTime={self.tick_ms}\n"
            f"dataDir={data}\n"
            f"clientPort={self.port}\n"
            "clientPortAddress=127.0.0.1\n"
            "admin.enableServer=false\n"
            "4lw.commands.whitelist=ruok\n"
            "maxClientCnxns=200\n"
        )
        log = (self.directory / "zookeeper.log").open("ab")
        self.process = subprocess.Popen(
            [
                "java",
                "-Xmx256m",
                "-Dzookeeper.admin.enableServer=false",
                "-cp",
                f"/etc/zookeeper/conf:{ZK_CLASSPATH}",
                MAIN,
                str(cfg),
            ],
            stdout=log,
            stderr=subprocess.STDOUT,
            stdin=subprocess.DEVNULL,
        )
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if self.process.poll() is not None:
                raise RuntimeError(f"ZooKeeper exited; see {self.directory / 'zookeeper.log'}")
            if self.ruok():
                return self
            time.sleep(0.1)
        self.stop()
        raise RuntimeError(f"ZooKeeper did not answer on port {self.port} within {timeout}s")

    def ruok(self) -> bool:
        try:
            with socket.create_connection(("127.0.0.1", self.port), timeout=1) as s:
                s.sendall(b"ruok")
                return s.recv(4) == b"imok"
        except OSError:
            return False

    def restart(self, timeout: float = 60) -> None:
        """Stop and start again on the same port with the same data (sessions survive a
        restart shorter than their timeout)."""
        self.stop()
        self.start(timeout)

    @property
    def hosts(self) -> str:
        return f"127.0.0.1:{self.port}"

    def stop(self) -> None:
        if self.process:
            terminate(self.process, 10)
        self.process = None
