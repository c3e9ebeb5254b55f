"""examples/wordcount.py, counted exactly, with its SparkBolt on each kind of Spark a
topology can use, all on one local cluster whose supervisor runs its shared server:

- the supervisor's warm Spark Connect server (the default): the worker starts no JVM;
- a Spark standalone cluster (pyspark's own Master and Worker on loopback ports), named by
  `spark.master`; the Arrow handoff (`auto` picks it: executors may be on other hosts);
- a Spark Connect server the test starts, named by `spark.remote`; Arrow again.

And the shared server's security: loopback only, its token in a 0600 file and nowhere else,
clients without it refused, and the server ends with its supervisor.
"""

from __future__ import annotations

import json
import os
import secrets
import signal
import subprocess
import sys
import urllib.request
from pathlib import Path

import pytest
from kazoo.exceptions import NoNodeError

from squall import spark_connect as sc
from squall import thrift_api as T
from squall.local import LocalCluster, topology_id, wait_for, wait_until_quiet
from squall.processes import terminate
from squall.submit import submit_file
from squall.supervisor.spark_server import (
    SERVER_CLASS,
    end_stale,
    server_command,
    server_env,
)
from squall.zk import connection as zk_mod
from squall.zk.server import free_port

from .conftest import EXAMPLES
from .test_end_to_end import wordcount_module

STALL = "topology.executor.stall.secs"
# Spark start-ups on a shared 2-core host run far past pytest's default 300 s per test
pytestmark = pytest.mark.timeout(900)


def _spark_home() -> Path:
    from pyspark.find_spark_home import _find_spark_home

    return Path(_find_spark_home())


@pytest.fixture(scope="module")
def cluster(tmp_path_factory):
    conf = {sc.ENABLE: True}
    with LocalCluster(tmp_path_factory.mktemp("spark-modes"), supervisors=1, conf=conf) as c:
        yield c


def server_dir(cluster: LocalCluster) -> Path:
    return cluster.directory / "supervisor1" / "supervisor" / "spark-connect"


def ready_state(cluster: LocalCluster) -> sc.ServerState:
    def ready() -> sc.ServerState | None:
        state = sc.read_state(server_dir(cluster))
        assert state is None or state.state != sc.FAILED, state
        return state if state and state.state == sc.READY else None

    # 3.5 min on a 2-core host at load 25 (an idle one: 10 s, its warm-up jobs included)
    return wait_for(ready, 480, "the supervisor's Spark Connect server")


def worker_pids(cluster: LocalCluster) -> list[int]:
    pid_dir = cluster.directory / "supervisor1" / "supervisor" / "workers"
    return [int(p.read_text()) for p in pid_dir.glob("*.pid")]


def java_in_session(sid: int) -> list[int]:
    """PIDs of JVMs in the process session `sid` (a worker leads its own)."""
    found = []
    for stat in Path("/proc").glob("[0-9]*/stat"):
        try:
            fields = stat.read_text().rsplit(")", 1)[1].split()
            comm = (stat.parent / "comm").read_text().strip()
        except OSError:
            continue
        if int(fields[3]) == sid and comm == "java":
            found.append(int(stat.parent.name))
    return found


def forget_offsets(cluster: LocalCluster) -> None:
    """The word count's spouts commit their offsets to ZooKeeper under their consumer group,
    which outlives the topology: the next submission would find its input done."""
    zk = cluster.zk_client("nimbus", "supervisor")
    try:
        zk.delete(
            f"{zk_mod.layout(cluster.client_conf()).consumers_root}/wordcount", recursive=True
        )
    except NoNodeError:
        pass
    finally:
        zk.stop()
        zk.close()


def count_words(cluster: LocalCluster, out: Path, during=None, **overrides) -> None:
    """Submit the word count with `overrides`, wait until its input is done, check it is
    exact, run `during` while its workers still run, kill it, wait until they are gone."""
    conf = cluster.client_conf()
    with cluster.client() as client:
        # a loaded 2-core host took 100 s to start a SparkContext and an executor on the
        # standalone cluster: more than the default stall limit, which counts that as busy
        overrides = {"topology.output.dir": str(out), STALL: 600, **overrides}
        name = submit_file(client, EXAMPLES / "wordcount.py", conf, overrides=overrides)
        tid = topology_id(client, name)
    try:
        wait_until_quiet(conf, tid, 240)
        wc = wordcount_module()
        texts = [p.read_text() for p in sorted(Path(wc.INPUT).iterdir())]
        assert wc.totals(out) == wc.plain_count(texts)
        if during is not None:
            during()
    finally:
        with cluster.client() as client:
            client.killTopologyWithOpts(name, T.KillOptions(wait_secs=0))
        wait_for(lambda: not worker_pids(cluster), 60, "the word count's workers to stop")
        forget_offsets(cluster)


def test_wordcount_runs_on_the_supervisors_warm_server_without_a_jvm_per_worker(cluster, tmp_path):
    ready_state(cluster)

    def no_worker_jvm() -> None:
        pids = worker_pids(cluster)
        assert len(pids) == 3
        assert [p for pid in pids for p in java_in_session(pid)] == []

    count_words(cluster, tmp_path / "out", during=no_worker_jvm)


def test_the_supervisors_summary_says_when_its_server_is_ready(cluster):
    """The registration is rewritten when the server's state changes; nimbus reads it on its
    next monitor round, and getClusterInfo (the UI's and `squall list`'s source) says it."""
    ready_state(cluster)

    def summary_says() -> str | None:
        with cluster.client() as client:
            [supervisor] = client.getClusterInfo().supervisors
        assert not (supervisor.spark_connect or "").startswith("failed"), supervisor
        return supervisor.spark_connect if supervisor.spark_connect == "ready" else None

    assert wait_for(summary_says, 120, "the summary to say the server is ready") == "ready"


def _listening_addresses(port: int) -> set[str]:
    """Local addresses (hex, as /proc/net shows them) listening on `port`."""
    found = set()
    for table in ("/proc/net/tcp", "/proc/net/tcp6"):
        for line in Path(table).read_text().splitlines()[1:]:
            local, _remote, state = line.split()[1:4]
            address, port_hex = local.split(":")
            if state == "0A" and int(port_hex, 16) == port:
                found.add(address)
    return found


def _connected_to(port: int) -> bool:
    """Whether some TCP connection on this host is established to `port`."""
    for table in ("/proc/net/tcp", "/proc/net/tcp6"):
        for line in Path(table).read_text().splitlines()[1:]:
            remote, state = line.split()[2:4]
            if state == "01" and int(remote.split(":")[1], 16) == port:
                return True
    return False


LOOPBACK_HEX = {"0100007F", "0000000000000000FFFF00000100007F"}  # 127.0.0.1, v4 and mapped


def test_the_shared_server_listens_on_loopback_and_its_token_stays_private(cluster):
    state = ready_state(cluster)
    directory = server_dir(cluster)
    assert _listening_addresses(state.port) and _listening_addresses(state.port) <= LOOPBACK_HEX
    token_path = sc.token_file(directory)
    assert token_path.stat().st_mode & 0o777 == 0o600
    token = token_path.read_text().strip()
    assert len(token) >= 32
    cmdline = Path(f"/proc/{state.pid}/cmdline").read_bytes()
    assert SERVER_CLASS.encode() in cmdline and token.encode() not in cmdline
    for text_file in [*cluster.directory.rglob("*.log"), *cluster.directory.rglob("*.json")]:
        if text_file.is_file():
            assert token not in text_file.read_text(errors="replace"), text_file


def _query_status(url: str) -> str:
    """Run a query in a subprocess as a Connect client of `url`; its outcome in one word."""
    code = (
        "import sys\n"
        "from pyspark.sql.connect.session import SparkSession\n"
        "try:\n"
        "    s = SparkSession.builder.remote(sys.argv[1]).create()\n"
        "    print('ok', s.range(3).count())\n"
        "except Exception as exc:\n"
        "    print('UNAUTHENTICATED' if 'UNAUTHENTICATED' in str(exc) else repr(exc)[:300])\n"
    )
    env = {k: v for k, v in os.environ.items() if k != "SPARK_CONNECT_AUTHENTICATE_TOKEN"}
    done = subprocess.run(
        [sys.executable, "-c", code, url], capture_output=True, text=True, timeout=120, env=env
    )
    return done.stdout.strip().splitlines()[-1] if done.stdout.strip() else done.stderr[-300:]


def test_the_shared_server_refuses_clients_without_its_token(cluster):
    state = ready_state(cluster)
    assert _query_status(f"sc://localhost:{state.port}/") == "UNAUTHENTICATED"
    assert _query_status(sc.remote_url(state.port, "not-the-token")) == "UNAUTHENTICATED"
    token = sc.token_file(server_dir(cluster)).read_text().strip()
    assert _query_status(sc.remote_url(state.port, token)) == "ok 3"


def _standalone(tmp_path: Path):
    """A Spark standalone master and one worker on loopback ports, as their own processes."""
    spark_class = str(_spark_home() / "bin" / "spark-class")
    env = {**os.environ, "SPARK_LOCAL_IP": "127.0.0.1", "PYSPARK_PYTHON": sys.executable}
    port, ui = free_port(), free_port()
    master_url = f"spark://127.0.0.1:{port}"
    log = (tmp_path / "standalone.log").open("ab")
    master = [spark_class, "org.apache.spark.deploy.master.Master", "--host", "127.0.0.1"]
    master += ["--port", str(port), "--webui-port", str(ui)]
    worker = [spark_class, "org.apache.spark.deploy.worker.Worker", master_url]
    worker += ["--host", "127.0.0.1", "--webui-port", str(free_port()), "--cores", "2"]
    worker += ["--memory", "1g", "--work-dir", str(tmp_path / "spark-work")]
    processes = []
    try:
        for command in (master, worker):
            processes.append(
                subprocess.Popen(command, env=env, stdout=log, stderr=subprocess.STDOUT)
            )

        def alive_workers() -> int:
            with urllib.request.urlopen(f"http://127.0.0.1:{ui}/json/", timeout=2) as reply:
                return json.load(reply)["aliveworkers"]

        wait_for(alive_workers, 120, "the Spark standalone worker to register")
        return master_url, processes
    except BaseException:
        for process in processes:
            terminate(process, 10)
        raise
    finally:
        log.close()


def test_wordcount_on_a_spark_standalone_cluster(cluster, tmp_path):
    master_url, processes = _standalone(tmp_path)
    try:
        spark = {"spark.master": master_url, "spark.executor.memory": "512m"}
        count_words(cluster, tmp_path / "out", **spark)
        assert "app-" in "".join(p.name for p in (tmp_path / "spark-work").iterdir())
    finally:
        for process in reversed(processes):
            terminate(process, 10)


def test_wordcount_through_a_spark_connect_server_named_by_spark_remote(cluster, tmp_path):
    home, port, token = _spark_home(), free_port(), secrets.token_urlsafe(32)
    with (tmp_path / "connect.log").open("ab") as log:
        server = subprocess.Popen(
            server_command(home, port, "1g", "test-connect"),
            env=server_env(dict(os.environ), home, token),
            stdout=log,
            stderr=subprocess.STDOUT,
            start_new_session=True,
        )
    try:
        wait_for(lambda: _listening_addresses(port), 120, "the test's Connect server")
        shared = ready_state(cluster)
        remote = {"spark.remote": sc.remote_url(port, token)}

        def on_this_server() -> None:
            assert _connected_to(port)  # the test itself is no client of it: a worker is
            assert [p for pid in worker_pids(cluster) for p in java_in_session(pid)] == []

        count_words(cluster, tmp_path / "out", during=on_this_server, **remote)
        assert sc.read_state(server_dir(cluster)) == shared
    finally:
        terminate(server, 10)


def test_a_stale_server_is_ended_and_an_unrelated_pid_left_alone(tmp_path):
    """What a restarted supervisor finds in its PID file: a server it left is ended."""
    fake = subprocess.Popen(
        [sys.executable, "-c", "import time; time.sleep(120)", SERVER_CLASS],
        start_new_session=True,
    )
    other = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(120)"])
    try:
        sc.pid_file(tmp_path).write_text(str(fake.pid))
        end_stale(tmp_path)
        assert fake.wait(30) == -signal.SIGKILL
        assert not sc.pid_file(tmp_path).exists()
        sc.pid_file(tmp_path).write_text(str(other.pid))
        end_stale(tmp_path)
        assert other.poll() is None
    finally:
        terminate(fake, 1)
        terminate(other, 1)


def test_the_shared_server_ends_with_its_supervisor(cluster):
    """Last: it kills the module's supervisor, with SIGKILL, so no cleanup code runs."""
    state = ready_state(cluster)
    cluster.processes["supervisor1"].send_signal(signal.SIGKILL)
    cluster.processes["supervisor1"].wait(30)
    wait_for(lambda: gone(state.pid), 60, "the server to end with its supervisor")


def gone(pid: int) -> bool:
    """Exited: no such process, or a zombie its new parent has not reaped yet."""
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return True
    return stat.rsplit(")", 1)[1].split()[0] == "Z"
