"""A ZooKeeper ensemble of real servers (Debian's `zookeeper`), each on its own loopback
address like the hosts of a real ensemble: one client port for all of them (Storm's
storm.zookeeper.port), quorum and election ports, a myid file each. Used by LocalCluster
and the tests that kill servers under a running cluster; every server is ended by its PID.

Stopping one server leaves a quorum (2 of 3): clients move to another server and keep their
sessions. Stopping two leaves none: the last server stops serving, clients wait
(SUSPENDED), and sessions carry on when a quorum is back within their timeout (a new
leader gives every session a fresh timeout)."""

from __future__ import annotations

import subprocess
import time
from pathlib import Path

from squall.processes import terminate
from squall.zk.server import check_installed, free_port, serving, spawn

QUORUM_MAIN = "org.apache.zookeeper.server.quorum.QuorumPeerMain"
DEFAULT_ADDRESSES = ("127.0.2.1", "127.0.2.2", "127.0.2.3")


class ZooKeeperEnsemble:
    def __init__(
        self,
        directory: Path,
        addresses: tuple[str, ...] | list[str] = DEFAULT_ADDRESSES,
        tick_ms: int = 500,
    ) -> None:
        if len(addresses) < 3 or len(addresses) % 2 == 0:
            raise ValueError("an ensemble needs an odd number of servers, at least 3")
        self.directory = directory
        self.addresses = list(addresses)
        self.port = free_port(*self.addresses)
        self.quorum_port = free_port(*self.addresses)
        self.election_port = free_port(*self.addresses)
        self.tick_ms = tick_ms
        self.processes: dict[int, subprocess.Popen] = {}  # myid -> server process

    @property
    def myids(self) -> list[int]:
        return list(range(1, len(self.addresses) + 1))

    def address(self, myid: int) -> str:
        return self.addresses[myid - 1]

    def _config(self, myid: int) -> Path:
        server_dir = self.directory / f"zk{myid}"
        data = server_dir / "data"
        data.mkdir(parents=True, exist_ok=True)
        (data / "myid").write_text(f"{myid}\n")
        members = "".join(
            f"server.{i}={self.address(i)}:{self.quorum_port}:{self.election_port}\n"
            for i in self.myids
        )
        cfg = server_dir / "zoo.cfg"
        cfg.write_text(
            f"tickTime={self.tick_ms}\n"
            "initLimit=20\n"
            "syncLimit=5\n"
            f"dataDir={data}\n"
            f"clientPort={self.port}\n"
            f"clientPortAddress={self.address(myid)}\n"
            "admin.enableServer=false\n"
            "4lw.commands.whitelist=ruok,srvr\n"
            "maxClientCnxns=200\n"
            "maxSessionTimeout=60000\n" + members  # default 20 ticks: 10 s
        )
        return cfg

    def start(self, timeout: float = 90) -> ZooKeeperEnsemble:
        check_installed()
        try:
            for myid in self.myids:
                self.start_server(myid)
            self.wait_serving(self.myids, timeout)
        except BaseException:
            self.stop()
            raise
        return self

    def start_server(self, myid: int) -> None:
        """Start server `myid` (again) with its data; it rejoins the ensemble."""
        self.stop_server(myid)
        cfg = self._config(myid)
        self.processes[myid] = spawn(cfg.parent, QUORUM_MAIN, cfg)

    def stop_server(self, myid: int) -> None:
        process = self.processes.pop(myid, None)
        if process:
            terminate(process, 10)

    def is_serving(self, myid: int) -> bool:
        return serving(self.address(myid), self.port)

    def wait_serving(self, myids: list[int], timeout: float) -> None:
        """Wait until every server in `myids` serves clients (is part of a quorum)."""
        deadline = time.monotonic() + timeout
        while not all(self.is_serving(i) for i in myids):
            for myid, process in self.processes.items():
                if process.poll() is not None:
                    log = self.directory / f"zk{myid}" / "zookeeper.log"
                    raise RuntimeError(f"ZooKeeper server {myid} exited; see {log}")
            if time.monotonic() > deadline:
                raise RuntimeError(f"ZooKeeper servers {myids} not serving within {timeout}s")
            time.sleep(0.2)

    @property
    def servers(self) -> list[str]:
        """storm.zookeeper.servers (their common port: storm.zookeeper.port)."""
        return list(self.addresses)

    @property
    def hosts(self) -> str:
        """kazoo's connection string: every server."""
        return ",".join(f"{a}:{self.port}" for a in self.addresses)

    def stop(self) -> None:
        for myid in list(self.processes):
            self.stop_server(myid)
