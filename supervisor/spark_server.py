"""The supervisor's warm Spark: one Spark Connect server (local[*], its own JVM) started with
the supervisor, shared by the SparkBolts of its workers, each topology in Connect sessions of
its own (squall/spark_connect.py says why and how workers find it).

It listens on loopback only (workers are on this host), answers only clients that present
its token (Spark 4's spark.connect.authenticate.token, given to the JVM in its environment,
never on its command line), and its driver's RPC ports use spark.authenticate. The process
leads its own session and gets SIGTERM when the supervisor dies (PR_SET_PDEATHSIG); its PID
file lets a restarted supervisor end one that outlived it.
"""

from __future__ import annotations

import contextlib
import logging
import os
import secrets
import signal
import socket
import subprocess
import sys
import threading
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from squall import spark_connect as sc
from squall.processes import terminate
from squall.zk.identity import write_private
from squall.zk.server import free_port

log = logging.getLogger("squall.supervisor")

SERVER_CLASS = "org.apache.spark.sql.connect.service.SparkConnectServer"
LOOPBACK = "127.0.0.1"


def server_command(spark_home: Path, port: int, memory: str, name: str) -> list[str]:
    """spark-submit's command line for the server (nothing secret in it: `ps` shows it)."""
    confs = {
        "spark.connect.grpc.binding.address": LOOPBACK,
        "spark.connect.grpc.binding.port": str(port),
        "spark.driver.host": LOOPBACK,
        "spark.driver.bindAddress": LOOPBACK,
        "spark.driver.memory": memory,
        "spark.authenticate": "true",
        "spark.ui.enabled": "false",
        "spark.ui.showConsoleProgress": "false",
    }
    command = [str(spark_home / "bin" / "spark-submit"), "--class", SERVER_CLASS]
    command += ["--master", sc.DEFAULT_MASTER, "--name", name]
    for key, value in confs.items():
        command += ["--conf", f"{key}={value}"]
    return command


def server_env(base: dict[str, str], spark_home: Path, token: str) -> dict[str, str]:
    return {
        **base,
        "SPARK_HOME": str(spark_home),
        "SPARK_LOCAL_IP": LOOPBACK,
        "PYSPARK_PYTHON": base.get("PYSPARK_PYTHON", sys.executable),
        sc.TOKEN_ENV: token,
    }


def readiness(state: sc.ServerState | None) -> str:
    """What the supervisor's registration says of its server (SupervisorInfo.spark_connect):
    "starting", "ready" or "failed: <reason>"; "off" when there is none."""
    if state is None:
        return "off"
    if state.state == sc.FAILED:
        return f"failed: {state.reason}"
    return state.state


def _die_with_parent() -> None:
    """In the child before exec: SIGTERM when the supervisor's thread that started it ends
    (run() starts it on the main thread, which lives as long as the supervisor)."""
    with contextlib.suppress(Exception):
        import ctypes

        ctypes.CDLL("libc.so.6", use_errno=True).prctl(1, signal.SIGTERM)  # PR_SET_PDEATHSIG


def end_stale(directory: Path) -> None:
    """End a server that a killed earlier run of this supervisor left (only if that PID is
    still a Spark Connect server: a reused PID is left alone)."""
    path = sc.pid_file(directory)
    try:
        pid = int(path.read_text().strip())
        if SERVER_CLASS.encode() in Path(f"/proc/{pid}/cmdline").read_bytes():
            os.killpg(pid, signal.SIGKILL)
            log.info("ended a stale Spark Connect server (pid %d)", pid)
    except (ValueError, OSError):
        pass
    path.unlink(missing_ok=True)


class SparkConnectServer:
    def __init__(
        self,
        conf: dict[str, Any],
        name: str,
        directory: Path | None = None,
        port: int | None = None,
        memory: str | None = None,
        on_state: Callable[[sc.ServerState], None] | None = None,
    ) -> None:
        """The supervisor's server by default; `squall spark connect-server` names its own
        directory, port and memory. `on_state` hears each state it writes (on the thread
        that writes it): the supervisor shows it in its registration."""
        self.directory = directory or sc.server_dir(conf)
        self.conf = conf
        self.name = name
        self.port = conf[sc.PORT] if port is None else port
        self.memory = memory or conf[sc.MEMORY]
        self.process: subprocess.Popen | None = None
        self.stopping = threading.Event()
        self.thread: threading.Thread | None = None
        self.on_state = on_state

    def start(self) -> None:
        """Start the JVM now (call on the main thread); it is awaited and warmed with one
        job in the background, so the supervisor registers its slots meanwhile."""
        from pyspark.find_spark_home import _find_spark_home

        self.directory.mkdir(parents=True, exist_ok=True)
        end_stale(self.directory)
        token = secrets.token_urlsafe(32)
        write_private(sc.token_file(self.directory), token)
        port = self.port or free_port()
        self._write(sc.ServerState(sc.STARTING, port))
        try:
            spark_home = Path(_find_spark_home())
            with (self.directory / "server.log").open("ab") as out:
                self.process = subprocess.Popen(
                    server_command(spark_home, port, self.memory, self.name),
                    env=server_env(dict(os.environ), spark_home, token),
                    stdout=out,
                    stderr=subprocess.STDOUT,
                    stdin=subprocess.DEVNULL,
                    start_new_session=True,
                    preexec_fn=_die_with_parent,
                )
        except (OSError, RuntimeError) as exc:  # no Spark here: workers start their own
            log.warning("cannot start the Spark Connect server: %s", exc)
            self._write(sc.ServerState(sc.FAILED, port, 0, f"cannot start it: {exc}"))
            return
        sc.pid_file(self.directory).write_text(str(self.process.pid))
        log.info(
            "Spark Connect server starting on %s:%d (pid %d)", LOOPBACK, port, self.process.pid
        )
        self.thread = threading.Thread(
            target=self._await_ready, args=(port, token), name="spark-connect", daemon=True
        )
        self.thread.start()

    def _await_ready(self, port: int, token: str) -> None:
        assert self.process is not None
        deadline = time.monotonic() + self.conf[sc.START_TIMEOUT]
        try:
            while not _listening(port):
                if self.process.poll() is not None:
                    raise RuntimeError(f"exited with code {self.process.returncode}")
                if time.monotonic() > deadline or self.stopping.is_set():
                    raise RuntimeError("did not listen in time")
                time.sleep(0.2)
            _warm(port, token, self.directory)
        except Exception as exc:  # noqa: BLE001 - workers then start Spark of their own
            reason = f"{exc} (see {self.directory / 'server.log'})"
            log.warning("Spark Connect server failed: %s; workers use their own Spark", reason)
            self._write(sc.ServerState(sc.FAILED, port, self.process.pid, reason))
            return
        self._write(sc.ServerState(sc.READY, port, self.process.pid))
        log.info("Spark Connect server ready on %s:%d", LOOPBACK, port)

    def _write(self, state: sc.ServerState) -> None:
        write_private(sc.state_file(self.directory), state.to_json())
        if self.on_state is not None:
            self.on_state(state)

    def stop(self) -> None:
        self.stopping.set()
        if self.process is not None:
            terminate(self.process, 10)
            with contextlib.suppress(ProcessLookupError, PermissionError):
                os.killpg(self.process.pid, signal.SIGKILL)  # its Python workers with it
        sc.state_file(self.directory).unlink(missing_ok=True)
        sc.pid_file(self.directory).unlink(missing_ok=True)


def _listening(port: int) -> bool:
    with socket.socket() as s:
        s.settimeout(1)
        return s.connect_ex((LOOPBACK, port)) == 0


def _warm(port: int, token: str, directory: Path) -> None:
    """Two small aggregations through a Connect session, one over Arrow and one over a
    Parquet file (the two handoffs): the server's first jobs pay its class loading, the
    Parquet reader's start and code generation (4-5 s, 15 s on a loaded host) here, not in a
    topology's first micro-batch."""
    import pyarrow as pa
    import pyarrow.parquet as pq
    from pyspark.sql.connect.client import DefaultChannelBuilder
    from pyspark.sql.connect.session import SparkSession

    table = pa.table({"word": ["a", "b", "a"], "count": [1, 2, 3]})
    path = directory / "warm.parquet"
    pq.write_table(table, path)
    channel = DefaultChannelBuilder(sc.remote_url(port))
    channel.set("token", token)  # not in the URL: an error quoting it would log the token
    session = SparkSession.builder.channelBuilder(channel).create()
    try:
        for df in (
            session.createDataFrame(table),
            session.read.schema("word string, count bigint").parquet(str(path)),
        ):
            df.groupBy("word").agg({"count": "sum"}).toArrow()  # no pyspark.sql.functions:
            # this process is no Connect client by its environment, which they go by
    finally:
        session.stop()
        path.unlink(missing_ok=True)
