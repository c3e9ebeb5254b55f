"""A whole squall cluster on this machine: a real ZooKeeper server, a nimbus process and
supervisor processes, each with its own conf file and local dir. Used by `squall local` and
by the integration tests. Every process is ended by its PID on stop, also after a failure.
The waits on a running cluster live in squall.cluster_waits; they are re-exported here because
tests, benches and `squall local` know them as squall.local's.

Secure like any cluster unless its conf says `security: false`: the credentials (CA, nimbus,
admin and supervisor certificates) are made in <directory>/credentials before any process
starts, and its clients present admin's certificate (or another identity's, see client()).
"""

from __future__ import annotations

import contextlib
import subprocess
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import yaml
from kazoo.client import KazooClient

from squall.client import nimbus_address, nimbus_client
from squall.cluster_waits import (  # noqa: F401
    ClusterError,
    topology_id,
    topology_progress,
    wait_for,
    wait_until_quiet,
)
from squall.local_conf import credentials_dir, daemon_conf, ensure_local_credentials
from squall.processes import kill_pid_file, python_module, terminate
from squall.supervisor.spark_server import end_stale
from squall.ui.token import QUERY, TOKEN_FILE
from squall.zk.ensemble import ZooKeeperEnsemble
from squall.zk.identity import load_identity, role_identities
from squall.zk.server import ZooKeeperServer, free_port


@dataclass
class LocalCluster:
    directory: Path
    supervisors: int = 2
    slots_per_supervisor: int = 4
    conf: dict[str, Any] = field(default_factory=dict)
    nimbuses: int = 1
    zookeeper: ZooKeeperServer | ZooKeeperEnsemble | None = None
    processes: dict[str, subprocess.Popen] = field(default_factory=dict)
    nimbus_ports: list[int] = field(default_factory=list)
    ui: bool = False  # also run `squall ui` (on a free loopback port: ui_url)
    ui_port: int = 0
    # per supervisor number: conf it alone gets (e.g. supervisor.memory.capacity.mb)
    supervisor_confs: dict[int, dict[str, Any]] = field(default_factory=dict)
    # Several hosts on one machine, each a loopback address of its own, so that nothing can
    # lean on 127.0.0.1: supervisor i registers as supervisor_hosts[i - 1] (its
    # storm.local.hostname; its slots and workers bind that address), nimbus binds
    # nimbus_host, one ZooKeeper server listens on zookeeper_host. zookeeper_servers 3 (or
    # 5) runs an ensemble instead (squall.zk.ensemble), each server on its own address.
    supervisor_hosts: list[str] = field(default_factory=list)
    nimbus_host: str = "127.0.0.1"
    zookeeper_host: str = "127.0.0.1"
    zookeeper_servers: int = 1
    # How a daemon is started: `<command> --config FILE nimbus|supervisor`. The test of the
    # built wheel names the `squall` script installed from it.
    command: list[str] = field(default_factory=lambda: python_module("squall.cli"))

    @property
    def nimbus_port(self) -> int:
        """The first nimbus's port (any nimbus answers reads; writes go to the leader)."""
        return self.nimbus_ports[0]

    @staticmethod
    def nimbus_name(i: int) -> str:
        return "nimbus" if i == 1 else f"nimbus{i}"

    def base_conf(self) -> dict[str, Any]:
        assert self.zookeeper is not None
        return daemon_conf(
            self.zookeeper, self.nimbus_host, self.nimbus_ports, self.directory, self.conf
        )

    @property
    def credentials_dir(self) -> Path:
        return credentials_dir(self.directory)

    def _ensure_credentials(self) -> None:
        ensure_local_credentials(self.directory, self.nimbus_host, self.conf)

    def _write_conf(self, name: str, extra: dict[str, Any]) -> Path:
        path = self.directory / f"{name}.yaml"
        conf = {**self.base_conf(), "storm.local.dir": str(self.directory / name), **extra}
        path.write_text(yaml.safe_dump(conf))
        return path

    def _spawn(self, name: str, command: str, extra: dict[str, Any] | None = None) -> None:
        self.stop_process(name)  # never orphan a live process under the same name
        conf_file = self._write_conf(name, extra or {})
        log = (self.directory / f"{name}.log").open("ab")
        self.processes[name] = subprocess.Popen(
            [*self.command, "--config", str(conf_file), command],
            stdout=log,
            stderr=subprocess.STDOUT,
            stdin=subprocess.DEVNULL,
        )
        log.close()

    def start(self, timeout: float = 90) -> LocalCluster:
        self.directory.mkdir(parents=True, exist_ok=True)
        try:
            self._ensure_credentials()
            self.zookeeper = self._start_zookeeper()
            self.nimbus_ports = [free_port(self.nimbus_host) for _ in range(self.nimbuses)]
            self._write_conf("client", {})  # for the `squall` command: client_conf_file
            for i, port in enumerate(self.nimbus_ports, start=1):
                self._spawn(self.nimbus_name(i), "nimbus", {"nimbus.thrift.port": port})
            for i in range(1, self.supervisors + 1):
                self.start_supervisor(i)
            wait_for(self._cluster_ready, timeout, "nimbus and supervisors to come up")
            if self.ui:
                self.start_ui(timeout)
        except BaseException:
            self.stop()
            raise
        return self

    def _start_zookeeper(self) -> ZooKeeperServer | ZooKeeperEnsemble:
        if self.zookeeper_servers == 1:
            server = ZooKeeperServer(self.directory / "zookeeper", address=self.zookeeper_host)
            return server.start()
        addresses = [f"127.0.2.{i}" for i in range(1, self.zookeeper_servers + 1)]
        return ZooKeeperEnsemble(self.directory / "zookeeper", addresses).start()

    def supervisor_host(self, i: int) -> str:
        """Supervisor i's host: its own address when supervisor_hosts names one."""
        return self.supervisor_hosts[i - 1] if i <= len(self.supervisor_hosts) else "127.0.0.1"

    def start_supervisor(self, i: int) -> None:
        host = self.supervisor_host(i)
        ports = [free_port(host) for _ in range(self.slots_per_supervisor)]
        self._spawn(
            f"supervisor{i}",
            "supervisor",
            {
                "supervisor.id": f"supervisor{i}",
                "supervisor.slots.ports": ports,
                "storm.local.hostname": host,
                **self.supervisor_confs.get(i, {}),
            },
        )

    @property
    def ui_url(self) -> str:
        return f"http://127.0.0.1:{self.ui_port}"

    @property
    def ui_token(self) -> str | None:
        """What every request to the UI carries (None in open mode): squall.ui.token."""
        path = self.credentials_dir / TOKEN_FILE
        return path.read_text().strip() if path.exists() else None

    @property
    def ui_address(self) -> str:
        """The address to open in a browser: the UI's page with its token."""
        token = self.ui_token
        return f"{self.ui_url}/" + (f"?{QUERY}={token}" if token else "")

    def ui_headers(self) -> dict[str, str]:
        token = self.ui_token  # one read of the file
        return {"Authorization": f"Bearer {token}"} if token else {}

    def start_ui(self, timeout: float = 60) -> None:
        """`squall ui` on a free loopback port, waited for until it serves its page."""
        import urllib.request

        self.ui_port = self.ui_port or free_port()
        self._spawn("ui", "ui", {"ui.host": "127.0.0.1", "ui.port": self.ui_port})

        def serving() -> str | None:
            if self.processes["ui"].poll() is not None:
                return "exited"
            request = urllib.request.Request(self.ui_url + "/", headers=self.ui_headers())
            with urllib.request.urlopen(request, timeout=5) as response:
                return "serving" if response.status == 200 else None

        if wait_for(serving, timeout, "squall ui to serve its page") == "exited":
            raise ClusterError(f"ui exited; see {self.directory / 'ui.log'}")

    def start_nimbus(self, i: int) -> None:
        port = self.nimbus_ports[i - 1]
        self._spawn(self.nimbus_name(i), "nimbus", {"nimbus.thrift.port": port})

    def restart_nimbus(self, i: int = 1, timeout: float = 60) -> None:
        self.stop_process(self.nimbus_name(i))
        self.start_nimbus(i)
        wait_for(self._cluster_ready, timeout, "nimbus to come back")

    def leader(self, identity: str | None = None) -> tuple[str, int]:
        return nimbus_address(self.base_conf_full(), identity=identity)

    def _cluster_ready(self) -> bool:
        for name, process in self.processes.items():
            if process.poll() is not None:
                raise ClusterError(f"{name} exited; see {self.directory / (name + '.log')}")
        with self.client() as client:
            return len(client.getClusterInfo().supervisors) >= self.supervisors

    @contextlib.contextmanager
    def client(self, identity: str | None = None) -> Iterator[Any]:
        """A client of the leading nimbus, as `identity` (default: security.user, admin)."""
        conf = self.base_conf_full()
        address = nimbus_address(conf, identity=identity)
        with nimbus_client(*address, conf=conf, identity=identity) as client:
            yield client

    def client_conf_file(self) -> Path:
        """A conf file for the `squall` command (--config) talking to this cluster."""
        return self.directory / "client.yaml"

    def client_conf(self) -> dict[str, Any]:
        """A full conf for clients (CLI, tests) talking to this cluster."""
        return self.base_conf_full()

    def base_conf_full(self) -> dict[str, Any]:
        from squall.config import cluster_conf

        return cluster_conf(**{**self.base_conf(), "storm.local.dir": str(self.directory)})

    def zk_client(self, *roles: str) -> KazooClient:
        """A started plain kazoo client of this cluster's ZooKeeper, logged in as each of
        `roles` (none: anonymous); what it creates is open. Tests and tools inspect and probe
        the cluster with it; the caller stops it."""
        assert self.zookeeper is not None
        conf = self.base_conf_full()
        secure = role_identities(conf)  # else there are no roles: open or one shared identity
        auth = [("digest", load_identity(conf, role).payload) for role in roles if secure]
        client = KazooClient(hosts=self.zookeeper.hosts, auth_data=auth or None)
        client.start()
        return client

    def stop_process(self, name: str, grace: float = 15) -> None:
        process = self.processes.pop(name, None)
        if process:
            terminate(process, grace)

    def stop(self) -> None:
        self.stop_process("ui")
        for name in [n for n in self.processes if n.startswith("supervisor")]:
            self.stop_process(name)
        for name in [n for n in self.processes if n.startswith("nimbus")]:
            self.stop_process(name)
        for pid_file in self.directory.glob("supervisor*/supervisor/workers/*.pid"):
            kill_pid_file(pid_file)
        for server in self.directory.glob("supervisor*/supervisor/spark-connect"):
            end_stale(server)  # a supervisor killed before it could end its own
        if self.zookeeper:
            self.zookeeper.stop()

    def __enter__(self) -> LocalCluster:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()
