"""A real ZooKeeper server (Debian's `zookeeper` package) on a loopback port, for `squall
local` and the integration tests. Admin server off; stopped by PID. It listens on one
address only (clientPortAddress), 127.0.0.1 unless told otherwise, so a test can put it on
an address of its own, as a ZooKeeper host of a real cluster has."""

from __future__ import annotations

import os
import random
import socket
import subprocess
import threading
import time
from pathlib import Path

from squall.processes import terminate

ZK_CLASSPATH = "/usr/share/java/zookeeper.jar"
MAIN = "org.apache.zookeeper.server.ZooKeeperServerMain"
FREE_PORT_TRIES = 50
# "LOW-HIGH": free_port draws from these ports, not the kernel's ephemeral ones. The test
# suite gives each of its pytest processes a range of its own (tests/conftest.py): a port
# handed out is often bound only later (a supervisor's slot, when a worker starts), and
# another process drawing from the same ports could take it meanwhile.
PORT_RANGE_ENV = "SQUALL_FREE_PORTS"
_handed_out: set[int] = set()  # never handed out twice by this process (not its children)
_handing_out = threading.Lock()
_draw = random.SystemRandom()  # not the global generator, which a seeded test may reset


def free_port(*addresses: str) -> int:
    """A TCP port free on every one of `addresses` (default 127.0.0.1) right now, and not
    handed out before by this process: the servers of an ensemble, like Storm's
    storm.zookeeper.port, share one client port."""
    addresses = addresses or ("127.0.0.1",)
    span = port_range(os.environ.get(PORT_RANGE_ENV, ""))
    with _handing_out:
        for _ in range(FREE_PORT_TRIES):
            if span is None:
                with socket.socket() as s:
                    s.bind((addresses[0], 0))
                    port = s.getsockname()[1]
                others = addresses[1:]
            else:
                port, others = _draw.randint(*span), addresses
            if port not in _handed_out and all(_bindable(a, port) for a in others):
                _handed_out.add(port)
                return port
    raise RuntimeError(f"no port free on all of {addresses} in {FREE_PORT_TRIES} tries")


def port_range(text: str) -> tuple[int, int] | None:
    """A range written LOW-HIGH as its two ports; None for an empty text, else ValueError."""
    if not text:
        return None
    low, sep, high = text.partition("-")
    if not sep or not low.strip().isdecimal() or not high.strip().isdecimal():
        raise ValueError(f"{PORT_RANGE_ENV} must be LOW-HIGH, not {text!r}")
    span = int(low), int(high)
    if not 1024 <= span[0] <= span[1] <= 65535:
        raise ValueError(f"{PORT_RANGE_ENV} must be ports 1024-65535, low first, not {text!r}")
    return span


def _bindable(address: str, port: int) -> bool:
    with socket.socket() as s:
        try:
            s.bind((address, port))
            return True
        except OSError:
            return False


def check_installed() -> None:
    if not Path(ZK_CLASSPATH).exists():
        raise RuntimeError(
            f"{ZK_CLASSPATH} not found: install Debian's zookeeper package (make system-deps)"
        )


def java_command(main: str, cfg: Path) -> list[str]:
    return [
        "java",
        "-Xmx256m",
        "-Dzookeeper.admin.enableServer=false",
        "-cp",
        f"/etc/zookeeper/conf:{ZK_CLASSPATH}",
        main,
        str(cfg),
    ]


def four_letters(address: str, port: int, word: bytes) -> bytes:
    """ZooKeeper's answer to a four-letter word (b"" when it does not answer)."""
    try:
        with socket.create_connection((address, port), timeout=1) as s:
            s.sendall(word)
            chunks = []
            while chunk := s.recv(4096):
                chunks.append(chunk)
            return b"".join(chunks)
    except OSError:
        return b""


def serving(address: str, port: int) -> bool:
    """Whether the server answers clients: up, and in an ensemble part of a quorum (`ruok`
    answers imok without a quorum; `srvr` names the server's mode only with one)."""
    return b"Mode: " in four_letters(address, port, b"srvr")


def spawn(directory: Path, main: str, cfg: Path) -> subprocess.Popen:
    with (directory / "zookeeper.log").open("ab") as log:
        return subprocess.Popen(
            java_command(main, cfg), stdout=log, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL
        )


class ZooKeeperServer:
    def __init__(
        self,
        directory: Path,
        port: int | None = None,
        tick_ms: int = 500,
        address: str = "127.0.0.1",
    ) -> None:
        self.directory = directory
        self.address = address
        self.port = port or free_port(address)
        self.tick_ms = tick_ms
        self.process: subprocess.Popen | None = None

    def start(self, timeout: float = 60) -> ZooKeeperServer:
        check_installed()
        data = self.directory / "data"
        data.mkdir(parents=True, exist_ok=True)
        cfg = self.directory / "zoo.cfg"
        cfg.write_text(
            f"tickTime={self.tick_ms}\n"
            f"dataDir={data}\n"
            f"clientPort={self.port}\n"
            f"clientPortAddress={self.address}\n"
            "admin.enableServer=false\n"
            "4lw.commands.whitelist=ruok,srvr\n"
            "maxClientCnxns=200\n"
        )
        self.process = spawn(self.directory, MAIN, cfg)
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
        return four_letters(self.address, self.port, b"ruok") == b"imok"

    def restart(self, timeout: float = 60) -> None:
        """Stop and start again on the same port with the same data (sessions survive a
        restart shorter than their timeout)."""
        self.stop()
        self.start(timeout)

    @property
    def servers(self) -> list[str]:
        """storm.zookeeper.servers for this server (its port: storm.zookeeper.port)."""
        return [self.address]

    @property
    def hosts(self) -> str:
        return f"{self.address}:{self.port}"

    def stop(self) -> None:
        if self.process:
            terminate(self.process, 10)
        self.process = None
