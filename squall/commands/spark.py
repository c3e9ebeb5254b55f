"""`squall spark connect-server|certificate|master|worker`: Spark for SparkBolts on other
hosts, from pip's pyspark (docs/spark.md)."""

from __future__ import annotations

import signal
import socket
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import click

from squall.commands.group import console, fail, main

LISTENER_PORT = 15003


def _spark_home() -> Path:
    from pyspark.find_spark_home import _find_spark_home

    return Path(_find_spark_home())


def _say(line: str) -> None:
    console.print(line, soft_wrap=True, markup=False, highlight=False)


@main.group()
def spark() -> None:
    """Spark for SparkBolts: an authenticated remote Spark Connect server, a standalone
    master and workers (docs/spark.md)."""


def _listener_names(host: str, names: tuple[str, ...]) -> list[str]:
    from squall.security.certificates import UNSPECIFIED

    found = [*names, host, "localhost", "127.0.0.1", socket.getfqdn(), socket.gethostname()]
    return [n for i, n in enumerate(found) if n and n not in UNSPECIFIED and n not in found[:i]]


@spark.command("certificate")
@click.option("--name", "names", multiple=True, required=True, help="a name workers dial it by")
@click.pass_context
def certificate(ctx: click.Context, names: tuple[str, ...]) -> None:
    """Issue the Spark host's server certificate (spark-connect.pem/.key) naming NAMEs; run
    where the CA key is, then copy both files and ca.pem to the Spark host's security.dir."""
    from squall.security.certificates import issue_server
    from squall.spark_tunnel import IDENTITY

    pem = issue_server(ctx.obj, IDENTITY, _listener_names("", names))
    _say(f"{pem} and {pem.with_suffix('.key')}: copy them, with ca.pem, to the Spark host")


def _ready(directory: Path, process_alive: Any) -> Any:
    from squall import spark_connect as sc

    while True:
        state = sc.read_state(directory)
        if state is not None and state.state in (sc.READY, sc.FAILED):
            return state
        if not process_alive():
            return state
        time.sleep(0.2)


@spark.command("connect-server")
@click.option("--host", default="0.0.0.0", show_default=True, help="address of the TLS port")
@click.option("--port", default=LISTENER_PORT, show_default=True, help="the TLS port")
@click.option("--name", "names", multiple=True, help="a name workers dial it by (certificate)")
@click.option(
    "--allow",
    "allowed",
    multiple=True,
    default=("supervisor",),
    show_default=True,
    help="identity (certificate CN) admitted",
)
@click.option("--memory", default="2g", show_default=True, help="the server's driver memory")
@click.option("--dir", "directory", type=click.Path(path_type=Path), help="state, token, log")
@click.pass_context
def connect_server(
    ctx: click.Context,
    host: str,
    port: int,
    names: tuple[str, ...],
    allowed: tuple[str, ...],
    memory: str,
    directory: Path | None,
) -> None:
    """Run a Spark Connect server (local[*]) on loopback with a token, reached from worker
    hosts over mutual TLS with the cluster's certificates: set
    topology.spark.connect.remote: HOST:PORT where SparkBolts should use it."""
    from squall import spark_connect as sc
    from squall import spark_tunnel as st
    from squall.security.certificates import CA, credential_paths, issue_server
    from squall.spark_tunnel_listener import TunnelListener
    from squall.supervisor.spark_server import SparkConnectServer

    conf = ctx.obj
    if (
        not credential_paths(conf, st.IDENTITY)[0].exists()
        and credential_paths(conf, CA)[1].exists()
    ):
        issue_server(conf, st.IDENTITY, _listener_names(host, names))
    context = st.listener_context(conf)  # missing credentials: one clear line, before a JVM
    directory = (directory or Path(conf["storm.local.dir"]) / "spark-connect-server").resolve()
    server = SparkConnectServer(conf, "squall-connect-server", directory, 0, memory)
    listener = TunnelListener(context, host, port, allowed, lambda: None)
    try:
        server.start()
        alive = lambda: server.process is not None and server.process.poll() is None  # noqa: E731
        state = _ready(directory, alive)
        if state is None or state.state != sc.READY:
            fail(f"the Spark Connect server did not start: {state.reason if state else '?'}")
            sys.exit(1)
        token = sc.token_file(directory).read_text().strip()
        listener.upstream = lambda: (state.port, token)
        for signum in (signal.SIGINT, signal.SIGTERM):
            signal.signal(signum, lambda *_: listener.close())
        bound = f"{listener.address[0]}:{listener.address[1]}"
        _say(
            f"squall spark connect-server: Spark Connect (local[*], pid {state.pid}) on "
            f"127.0.0.1:{state.port}; mutual TLS on {bound} for {', '.join(allowed)}; "
            f"workers: {st.REMOTE}: <this host>:{listener.address[1]}"
        )
        listener.run()
    finally:
        server.stop()


def _run_daemon(command: list[str], env: dict[str, str]) -> None:
    """Run a Spark daemon in the foreground, in our process group (whoever ends the group
    ends both); SIGTERM/SIGINT end it; its exit status is ours."""
    process = subprocess.Popen(command, env=env)
    for signum in (signal.SIGINT, signal.SIGTERM):
        signal.signal(signum, lambda *_: process.terminate())
    sys.exit(process.wait())


def _auth_file(conf: dict[str, Any], given: Path | None) -> Path:
    from squall.security.mode import credentials_dir
    from squall.spark_standalone import default_auth_file

    return given or default_auth_file(credentials_dir(conf))


@spark.command("master")
@click.option("--host", required=True, help="address to bind (workers and drivers reach it)")
@click.option("--port", default=7077, show_default=True)
@click.option("--webui-port", default=8080, show_default=True)
@click.option("--secret-file", type=click.Path(path_type=Path), help="spark-auth.properties")
@click.pass_context
def master(
    ctx: click.Context, host: str, port: int, webui_port: int, secret_file: Path | None
) -> None:
    """Run a Spark standalone master with Spark's RPC authentication; its secret file is
    made if missing (default security.dir/spark-auth.properties)."""
    import os

    from squall.spark_standalone import daemon_env, ensure_auth_file, master_command

    auth = _auth_file(ctx.obj, secret_file)
    made = ensure_auth_file(auth)
    home = _spark_home()
    _say(
        f"squall spark master: spark://{host}:{port} (web UI {host}:{webui_port}); secret in "
        f"{auth}{' (new)' if made else ''}: copy it (0600) to every Spark worker and "
        f"supervisor host; topologies set spark.master: spark://{host}:{port} and "
        f"topology.spark.auth.file: {auth}"
    )
    env = daemon_env(dict(os.environ), home, host, sys.executable)
    _run_daemon(master_command(home, host, port, webui_port, auth), env)


@spark.command("worker")
@click.argument("master_url")
@click.option("--host", required=True, help="address to bind (the master and drivers reach it)")
@click.option("--webui-port", default=8081, show_default=True)
@click.option("--cores", type=int, help="cores to offer (default: all)")
@click.option("--memory", help="memory to offer, e.g. 4g (default: all but 1g)")
@click.option("--work-dir", type=click.Path(path_type=Path), help="executors' directories")
@click.option("--secret-file", type=click.Path(path_type=Path), help="the master's secret file")
@click.pass_context
def worker(
    ctx: click.Context,
    master_url: str,
    host: str,
    webui_port: int,
    cores: int | None,
    memory: str | None,
    work_dir: Path | None,
    secret_file: Path | None,
) -> None:
    """Run a Spark standalone worker for MASTER_URL (spark://host:port) with the master's
    secret file (copied from the master's host)."""
    import os

    from squall.spark_standalone import (
        SparkSetupError,
        daemon_env,
        require_auth_file,
        worker_command,
    )

    try:
        auth = require_auth_file(_auth_file(ctx.obj, secret_file))
        home = _spark_home()
        command = worker_command(home, master_url, host, webui_port, cores, memory, work_dir, auth)
    except SparkSetupError as exc:
        fail(str(exc))
        sys.exit(1)
    _say(f"squall spark worker: {host} for {master_url} (web UI {host}:{webui_port})")
    _run_daemon(command, daemon_env(dict(os.environ), home, host, sys.executable))
