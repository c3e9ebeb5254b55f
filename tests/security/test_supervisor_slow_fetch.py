"""A topology whose downloads hang delays no other topology's workers (issue #11, item 5).

The hang is real: a TCP server that accepts and never answers, standing in for nimbus for
one topology's fetches only, so the supervisor's TLS client waits in its handshake (up to the
Thrift client's 120 s). Before, the conf was fetched on the sync loop at every worker start
(one such nimbus held up every topology's starts) and code came from a shared pool of four
threads (four slow packages held up every other topology's first start).
"""

from __future__ import annotations

import socket
import threading
from collections.abc import Iterator
from contextlib import contextmanager, suppress
from pathlib import Path

import pytest

from squall import thrift_api as T
from squall.client import nimbus_client
from squall.config import cluster_conf
from squall.local import LocalCluster, topology_id, wait_for
from squall.security.certificates import SUPERVISOR
from squall.submit import submit_file
from squall.supervisor.code_fetcher import CodeFetcher
from squall.supervisor.conf_fetcher import fetch_conf
from squall.supervisor.daemon import Supervisor
from squall.zk.server import free_port

TINY = Path(__file__).parents[1] / "integration" / "topologies" / "tiny.py"
SLOW_TOPOLOGIES = 8  # twice the old pool's threads


class SilentServer:
    """Accepts TCP connections and never answers them, until `release` closes them."""

    def __init__(self) -> None:
        self.sock = socket.create_server(("127.0.0.1", 0))
        self.sock.settimeout(0.1)
        self.port = self.sock.getsockname()[1]
        self.held: list[socket.socket] = []
        self.lock = threading.Lock()
        self.stopping = threading.Event()
        self.thread = threading.Thread(target=self._accept, daemon=True)
        self.thread.start()

    def _accept(self) -> None:
        while not self.stopping.is_set():
            try:
                conn, _ = self.sock.accept()
            except TimeoutError:
                continue
            except OSError:
                return
            with self.lock:
                self.held.append(conn)

    def accepted(self) -> int:
        with self.lock:
            return len(self.held)

    def release(self) -> None:
        """Close every connection held: each waiting client fails at once."""
        with self.lock:
            held, self.held = self.held, []
        for conn in held:
            conn.close()

    def close(self) -> None:
        self.stopping.set()
        self.thread.join(5)
        self.release()
        self.sock.close()


@contextmanager
def silent_server() -> Iterator[SilentServer]:
    server = SilentServer()
    try:
        yield server
    finally:
        server.close()


def test_hung_code_downloads_hold_up_no_other_topologys_code(tmp_path):
    """Eight topologies whose download hangs, and one whose code arrives: it is ready while
    all eight still wait (a shared pool of four threads kept it queued)."""
    with silent_server() as nimbus:

        def fetch(tid: str, code_dir: Path) -> None:
            if tid.startswith("slow"):
                with socket.create_connection(("127.0.0.1", nimbus.port), timeout=120) as s:
                    s.recv(1)  # the silent server answers nothing
                raise ConnectionError("nimbus closed the connection")
            (code_dir / "code").mkdir()

        wake = threading.Event()
        fetcher = CodeFetcher(tmp_path, fetch, wake)
        slow = [f"slow{i}" for i in range(SLOW_TOPOLOGIES)]
        fetcher.request(slow, now=0.0)
        wait_for(lambda: nimbus.accepted() == SLOW_TOPOLOGIES, 10, "every slow download")
        fetcher.request(["good"], now=0.0)
        wait_for(lambda: fetcher.jobs.ended("good"), 10, "the good topology's code")
        assert fetcher.collect(now=1.0) == []
        assert fetcher.ready("good")
        assert all(fetcher.busy(tid) and not fetcher.jobs.ended(tid) for tid in slow)
        nimbus.release()
        wait_for(lambda: all(fetcher.jobs.ended(t) for t in slow), 10, "the slow downloads")
        failed = fetcher.collect(now=2.0)
        assert [tid for tid, _ in failed] == slow
        assert all("nimbus closed the connection" in error for _, error in failed)


@pytest.fixture
def cluster(tmp_path):
    with LocalCluster(tmp_path / "cluster", supervisors=0) as c:
        yield c


def supervisor_errors(cluster: LocalCluster, tid: str) -> list[str]:
    with cluster.client() as client:
        errors = client.getTopologyInfo(tid).errors or {}
    return [e.error for e in errors.get("__supervisor", [])]


def submit(cluster: LocalCluster, name: str) -> str:
    with cluster.client() as client:
        submit_file(client, TINY, cluster.client_conf(), name=name)
        return topology_id(client, name)


def test_a_topology_whose_conf_download_hangs_delays_no_other_worker_start(cluster):
    """In-process supervisor, real nimbus, ZooKeeper and workers; the "slow" topology's conf
    comes from a nimbus that never answers. The "good" topology's workers start while that
    download still hangs; once it fails, it is the slow topology's error, and the retry
    (pointed back at the real nimbus) starts the slow topology's workers."""
    conf = cluster_conf(
        **{
            **cluster.base_conf(),
            "storm.local.dir": str(cluster.directory / "supervisor1"),
            "supervisor.id": "supervisor1",
            "supervisor.slots.ports": [free_port() for _ in range(4)],
            "storm.local.hostname": "127.0.0.1",
        }
    )
    with silent_server() as silent:
        hang = threading.Event()
        hang.set()

        def silent_session(c: dict) -> object:
            return nimbus_client("127.0.0.1", silent.port, conf=c, identity=SUPERVISOR)

        def fetch(tid: str, code_dir: Path) -> dict:
            if tid.startswith("slow-") and hang.is_set():
                return fetch_conf(conf, tid, code_dir, session=silent_session)
            return fetch_conf(conf, tid, code_dir)

        supervisor = Supervisor(conf)
        supervisor.confs.fetch = fetch
        thread = threading.Thread(target=supervisor.run, daemon=True)
        thread.start()
        workers = supervisor.local_dir / "workers"
        try:
            with cluster.client() as client:
                wait_for(lambda: client.getClusterInfo().supervisors, 30, "the supervisor")
            slow = submit(cluster, "slow")
            wait_for(lambda: silent.accepted() >= 1, 60, "the slow topology's conf download")
            good = submit(cluster, "good")
            wait_for(
                lambda: len(list(workers.glob(f"{good}-*.pid"))) == 2,
                60,
                "the good topology's two workers",
            )
            # the slow download still hangs (the silent server holds it up to 120 s)
            assert supervisor.confs.busy(slow) and not supervisor.confs.jobs.ended(slow)
            assert not list(workers.glob(f"{slow}-*.pid"))
            hang.clear()
            silent.release()
            failed = "cannot fetch the topology's conf"
            wait_for(
                lambda: any(failed in e for e in supervisor_errors(cluster, slow)),
                30,
                "the failed download as the slow topology's error",
            )
            wait_for(
                lambda: len(list(workers.glob(f"{slow}-*.pid"))) == 2,
                30,
                "the slow topology's workers, once its conf arrives",
            )
        finally:
            supervisor.stop()
            thread.join(60)
            with cluster.client() as client:
                for name in ("slow", "good"):
                    with suppress(T.NotAliveException):
                        client.killTopologyWithOpts(name, T.KillOptions(wait_secs=0))
        assert not thread.is_alive()
