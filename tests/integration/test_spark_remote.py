"""Spark on another host, as docs/spark.md sets it up, with the word count counted exactly:

- `squall spark connect-server` (a Spark Connect server on loopback with a token, behind a
  mutual-TLS port): a topology naming it in topology.spark.connect.remote runs its SparkBolt
  there through the worker's forwarder, with no JVM in the worker; an identity the server
  does not allow, and a client without the cluster's certificate, are refused with the
  reason;
- `squall spark master` and `squall spark worker` (pip's pyspark, Spark's RPC authentication
  with the secret in a 0600 file): a topology with spark.master and topology.spark.auth.file
  runs there, and the secret is on no command line and in no log;
- a Spark that cannot be reached (nothing on the port) is the SparkBolt's reported error,
  naming the address, the key and the cause.

JVMs: the Connect server; the master, the worker, the driver and one executor; none else.
Every process is ended by its PID (the squall command's process group) also on failure.
"""

from __future__ import annotations

import contextlib
import json
import os
import signal
import socket
import ssl
import subprocess
import sys
import urllib.request
from pathlib import Path

import pytest

from squall import spark_connect as sc
from squall import spark_tunnel as st
from squall import thrift_api as T
from squall.local import LocalCluster, topology_id, wait_for
from squall.security.certificates import CA, credential_paths
from squall.submit import submit_file
from squall.worker.spark_forwarder import Forwarder
from squall.zk.server import free_port

from .conftest import EXAMPLES, TOPOLOGIES, squall
from .test_spark_modes import (
    _connected_to,
    count_words,
    java_in_session,
    worker_pids,
)

pytestmark = pytest.mark.timeout(900)
SUPERVISOR_DIR = "supervisor1"


# Every JVM of the module (the Connect server, the master, the worker, the driver and the
# executor) inherits this from the test's environment through the cluster's processes and
# the squall commands: C1 only and one GC thread. On a shared 2-core host C2's compiler
# threads took most of a JVM's start-up (a local SparkSession and one job: 85 s -> 32 s at
# load 7); nothing here runs long enough for C2's code to pay off.
QUICK_JVM = "-XX:TieredStopAtLevel=1 -XX:+UseSerialGC"


@pytest.fixture(scope="module")
def cluster(tmp_path_factory):
    with pytest.MonkeyPatch.context() as patch:
        patch.setenv("JAVA_TOOL_OPTIONS", QUICK_JVM)
        with LocalCluster(tmp_path_factory.mktemp("spark-remote"), supervisors=1) as c:
            yield c


def squall_daemon(cluster: LocalCluster, log: Path, *args: str) -> subprocess.Popen:
    """`squall ARGS` against the cluster's conf, leading a process group of its own (the
    JVM it runs is in it), its output in `log`."""
    command = [sys.executable, "-m", "squall.cli", "--config", str(cluster.client_conf_file())]
    with log.open("ab") as out:
        return subprocess.Popen(
            [*command, *args], stdout=out, stderr=subprocess.STDOUT, start_new_session=True
        )


def end_group(process: subprocess.Popen) -> None:
    """SIGTERM to the command's group; after a grace, SIGKILL to whatever of it is left."""
    with contextlib.suppress(ProcessLookupError):
        os.killpg(process.pid, signal.SIGTERM)
    with contextlib.suppress(subprocess.TimeoutExpired):
        process.wait(30)
    with contextlib.suppress(ProcessLookupError):
        os.killpg(process.pid, signal.SIGKILL)
    process.wait(10)


@pytest.fixture(scope="module")
def connect_server(cluster, tmp_path_factory):
    """`squall spark connect-server` on a loopback TLS port: (port, its state directory, the
    command's process)."""
    directory = tmp_path_factory.mktemp("connect-server")
    port, log = free_port(), directory / "command.log"
    process = squall_daemon(
        cluster, log, "spark", "connect-server", "--host", "127.0.0.1", "--port", str(port),
        "--memory", "1g", "--dir", str(directory / "state"),
    )  # fmt: skip
    state_dir = directory / "state"
    try:

        def announced() -> bool:
            assert process.poll() is None, log.read_text()
            return "squall spark connect-server: " in log.read_text()

        wait_for(announced, 480, "squall spark connect-server to be ready")
        yield port, state_dir, process
    finally:
        end_group(process)
        state = sc.read_state(state_dir)
        if state is not None and state.pid and sc.pid_alive(state.pid):
            os.killpg(state.pid, signal.SIGKILL)  # the server leads a session of its own


def worker_jvms(cluster: LocalCluster) -> list[int]:
    return [p for pid in worker_pids(cluster) for p in java_in_session(pid)]


def test_wordcount_through_the_authenticated_remote_connect_server(
    cluster, connect_server, tmp_path
):
    port, state_dir, _ = connect_server
    token = sc.token_file(state_dir).read_text().strip()
    assert sc.token_file(state_dir).stat().st_mode & 0o777 == 0o600

    def through_the_tunnel() -> None:
        assert _connected_to(port)  # a worker's forwarder holds a TLS connection to it
        assert worker_jvms(cluster) == []

    remote = {st.REMOTE: f"127.0.0.1:{port}"}
    count_words(cluster, tmp_path / "out", during=through_the_tunnel, **remote)
    for path in [*cluster.directory.rglob("*.log"), *cluster.directory.rglob("*.json")]:
        if path.is_file():
            assert token not in path.read_text(errors="replace"), path


def test_identities_the_server_does_not_admit_are_refused_with_the_reason(
    cluster, connect_server, tmp_path
):
    port, _, _ = connect_server
    conf = cluster.client_conf()
    admin = Forwarder(st.dialer_context(conf, "admin"), ("127.0.0.1", port), 10)
    with pytest.raises(st.SparkUnreachable) as refused:
        admin.open()
    assert "identity 'admin' is not allowed here (allowed: supervisor)" in str(refused.value)
    # a client without a certificate (it trusts the cluster's CA, so only its own is missing)
    ca = credential_paths(conf, CA)[0]
    bare = Forwarder(ssl.create_default_context(cafile=str(ca)), ("127.0.0.1", port), 10)
    with pytest.raises(st.SparkUnreachable) as refused:
        bare.open()
    assert "it refused this host's certificate" in str(refused.value) or (
        "it did not accept this host's certificate" in str(refused.value)
    )


def error_texts(client, tid: str, component: str) -> list[str]:
    return [e.error for e in (client.getTopologyInfo(tid).errors or {}).get(component, [])]


def reported_error(cluster: LocalCluster, overrides: dict, name: str) -> str:
    """Submit the word count with `overrides`; the first line of the error its SparkBolt
    reports, checked to be the one `squall get-errors` shows too. One worker: the error is
    the SparkBolt's own, whichever worker runs it."""
    conf = cluster.client_conf()
    overrides = {"topology.workers": 1, **overrides}
    with cluster.client() as client:
        submit_file(client, EXAMPLES / "wordcount.py", conf, name=name, overrides=overrides)
        tid = topology_id(client, name)
        try:
            texts = wait_for(lambda: error_texts(client, tid, "count"), 240, "count's error")
            shown = json.loads(squall(cluster, "get-errors", name).stdout)["Comp-Errors"]
        finally:
            client.killTopologyWithOpts(name, T.KillOptions(wait_secs=0))
    wait_for(lambda: not worker_pids(cluster), 60, "the workers to stop")
    first = texts[0].splitlines()[0]
    assert shown["count"].splitlines()[0] == first
    return first


def test_a_wrong_identity_is_the_sparkbolts_error(cluster, connect_server):
    port, _, _ = connect_server
    overrides = {st.REMOTE: f"127.0.0.1:{port}", st.CLIENT_IDENTITY: "admin"}
    assert reported_error(cluster, overrides, "wc-wrong-identity") == (
        f"cannot reach the Spark Connect server at 127.0.0.1:{port} "
        "(topology.spark.connect.remote): it refused this connection: identity 'admin' "
        "is not allowed here (allowed: supervisor)"
    )


def closed_port() -> int:
    with socket.create_server(("127.0.0.1", 0)) as s:
        return s.getsockname()[1]


def test_an_unreachable_spark_is_the_sparkbolts_error_at_once(cluster):
    port = closed_port()
    first = reported_error(cluster, {st.REMOTE: f"127.0.0.1:{port}"}, "wc-no-server")
    assert first == (
        f"cannot reach the Spark Connect server at 127.0.0.1:{port} "
        "(topology.spark.connect.remote): connection refused (is `squall spark "
        "connect-server` running there, on that port?)"
    )
    master = {"spark.master": f"spark://127.0.0.1:{port}"}
    first = reported_error(cluster, master, "wc-no-master")
    assert first == (f"cannot reach Spark at 127.0.0.1:{port} (spark.master): connection refused")


def test_wordcount_on_a_standalone_spark_with_authentication(cluster, tmp_path):
    secret_file = tmp_path / "spark-auth.properties"
    port, ui, worker_ui = free_port(), free_port(), free_port()
    master_url = f"spark://127.0.0.1:{port}"
    log = tmp_path / "standalone.log"
    daemons = []
    try:
        daemons.append(
            squall_daemon(
                cluster,
                log,
                "spark",
                "master",
                "--host",
                "127.0.0.1",
                "--port",
                str(port),
                "--webui-port",
                str(ui),
                "--secret-file",
                str(secret_file),
            )  # fmt: skip
        )
        wait_for(secret_file.exists, 60, "the master's secret file")
        assert secret_file.stat().st_mode & 0o777 == 0o600
        daemons.append(
            squall_daemon(
                cluster,
                log,
                "spark",
                "worker",
                master_url,
                "--host",
                "127.0.0.1",
                "--webui-port",
                str(worker_ui),
                "--cores",
                "2",
                "--memory",
                "1g",
                "--work-dir",
                str(tmp_path / "spark-work"),
                "--secret-file",
                str(secret_file),
            )  # fmt: skip
        )

        def alive_workers() -> int:
            for daemon in daemons:
                assert daemon.poll() is None, log.read_text()[-3000:]
            with urllib.request.urlopen(f"http://127.0.0.1:{ui}/json/", timeout=2) as reply:
                return json.load(reply)["aliveworkers"]

        wait_for(alive_workers, 240, "the Spark worker to register with the master")
        # both daemons run with Spark's RPC authentication (the master admitted the worker)
        assert log.read_text().count("SecurityManager: authentication enabled") >= 2
        secret = secret_file.read_text().split("spark.authenticate.secret ")[1].split()[0]
        spark = {
            "spark.master": master_url,
            "spark.executor.memory": "512m",
            "topology.spark.auth.file": str(secret_file),
        }

        def secret_on_no_command_line() -> None:
            for cmdline in Path("/proc").glob("[0-9]*/cmdline"):
                try:
                    assert secret.encode() not in cmdline.read_bytes(), cmdline
                except OSError:
                    continue

        count_words(cluster, tmp_path / "out", during=secret_on_no_command_line, **spark)
        assert "app-" in "".join(p.name for p in (tmp_path / "spark-work").iterdir())
        for path in [log, *cluster.directory.rglob("*.log")]:
            assert secret not in path.read_text(errors="replace"), path
    finally:
        for daemon in reversed(daemons):
            end_group(daemon)


def test_the_server_going_away_mid_run_is_the_sparkbolts_error(cluster, connect_server):
    """Last of the module: it ends the module's connect-server."""
    port, _, server = connect_server
    name, conf = "spark-ticking", cluster.client_conf()
    overrides = {st.REMOTE: f"127.0.0.1:{port}"}
    with cluster.client() as client:
        submit_file(client, TOPOLOGIES / "spark_ticking.py", conf, name=name, overrides=overrides)
        tid = topology_id(client, name)
        try:
            wait_for(lambda: _connected_to(port), 240, "the SparkBolt's tunnel to the server")
            wait_for(lambda: executed(client, tid, "count") > 0, 240, "micro-batches to run")
            end_group(server)
            expected = (
                f"cannot reach the Spark Connect server at 127.0.0.1:{port} "
                "(topology.spark.connect.remote): connection refused (is `squall spark "
                "connect-server` running there, on that port?)"
            )

            def reported() -> bool:
                firsts = [t.splitlines()[0] for t in error_texts(client, tid, "count")]
                return expected in firsts

            wait_for(reported, 120, "the lost server as count's error")
        finally:
            client.killTopologyWithOpts(name, T.KillOptions(wait_secs=0))
    wait_for(lambda: not worker_pids(cluster), 60, "the workers to stop")


def executed(client, tid: str, component: str) -> int:
    total = 0
    for executor in client.getTopologyInfo(tid).executors or []:
        stats = executor.stats
        if executor.component_id == component and stats and stats.specific.bolt:
            total += sum(sum(w.values()) for w in stats.specific.bolt.executed.values())
    return total
