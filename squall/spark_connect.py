"""The supervisor's shared Spark Connect server, as its workers see it: where its state file
and token live, what the state says, and whether a topology uses it. Pure data and file
reads; the server process itself is supervisor/spark_server.py.

Why a shared server: creating a SparkSession in each worker costs 8-9 s and its first job
another 5 s (a new JVM, class loading, code generation). A Connect session to a server that
is already warm costs 0.5 s and its first job 0.6 s (bench/RESULTS.md, "Start-up").

The state file says "starting", "ready" (with the port and the server's PID) or "failed";
the token file is the server's pre-shared secret. Both are 0600 files in the supervisor's
local dir: only the supervisor's user (which its workers run as) can read them; neither
goes to ZooKeeper, to a conf file or to a log.
"""

from __future__ import annotations

import json
import os
from dataclasses import dataclass
from pathlib import Path
from typing import Any

ENABLE = "supervisor.spark.connect.enable"
PORT = "supervisor.spark.connect.port"
MEMORY = "supervisor.spark.connect.driver.memory"
START_TIMEOUT = "supervisor.spark.connect.start.timeout.secs"
DEFAULT_MASTER = "local[*]"
TOKEN_ENV = "SPARK_CONNECT_AUTHENTICATE_TOKEN"  # where PySpark's client and the server look

STARTING, READY, FAILED = "starting", "ready", "failed"


@dataclass(frozen=True)
class ServerState:
    state: str  # STARTING, READY or FAILED
    port: int = 0
    pid: int = 0
    reason: str = ""

    def to_json(self) -> str:
        return json.dumps(
            {"state": self.state, "port": self.port, "pid": self.pid, "reason": self.reason}
        )

    @staticmethod
    def from_json(text: str) -> ServerState:
        data = json.loads(text)
        return ServerState(
            str(data["state"]), int(data["port"]), int(data["pid"]), str(data["reason"])
        )


def server_dir(conf: dict[str, Any]) -> Path:
    """The supervisor's directory for its server (the same path the worker's conf leads to:
    a worker's storm.local.dir is its supervisor's, a key no topology may set)."""
    return Path(conf["storm.local.dir"]).resolve() / "supervisor" / "spark-connect"


def state_file(directory: Path) -> Path:
    return directory / "state.json"


def token_file(directory: Path) -> Path:
    return directory / "token"


def pid_file(directory: Path) -> Path:
    return directory / "server.pid"


def uses_shared_server(conf: dict[str, Any]) -> bool:
    """A worker's SparkBolts use the supervisor's server unless the server is off or the
    topology chose its own Spark: a `spark.remote` or `topology.spark.connect.remote` (a
    server on another host, docs/spark.md), or a `spark.master` other than the
    default local[*] (a topology that wants a JVM of its own sets e.g. local[2])."""
    if not conf.get(ENABLE, False) or conf.get("spark.remote"):
        return False
    if conf.get("topology.spark.connect.remote"):  # squall spark connect-server's
        return False
    return conf.get("spark.master", DEFAULT_MASTER) == DEFAULT_MASTER


def read_state(directory: Path) -> ServerState | None:
    """The server's state; None while there is no (readable, whole) state file yet."""
    try:
        return ServerState.from_json(state_file(directory).read_text())
    except (OSError, ValueError, KeyError, TypeError):
        return None


def remote_url(port: int, token: str | None = None) -> str:
    """The Connect URL of the server: `localhost`, because PySpark sends a token without TLS
    only over gRPC's local (loopback-checked) channel credentials, and only for that name.
    Workers leave the token out of it (they give it in SPARK_CONNECT_AUTHENTICATE_TOKEN, so
    no error message that quotes the URL can carry it into a log or ZooKeeper)."""
    secret = f";token={token}" if token else ""
    return f"sc://localhost:{port}/{secret}"


def pid_alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return pid > 0
