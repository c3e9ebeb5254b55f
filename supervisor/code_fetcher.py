"""Each topology's code, downloaded and unpacked off the sync loop, one job per topology.

A package that is slow, huge or refused used to stop every other topology on the supervisor
from starting or restarting workers (a killed worker of another topology came back 152 s
later) and its submitter saw no error. Here the sync loop only asks for code and starts the
workers whose code is ready; a small pool does the downloads, at most one job per topology,
and a failure is handed back to the loop to report as that topology's error and retry with
back-off (backoff.py).
"""

from __future__ import annotations

import json
import shutil
import threading
from collections.abc import Callable, Iterable
from concurrent.futures import Future, ThreadPoolExecutor
from pathlib import Path
from typing import Any

from squall.certificates import SUPERVISOR
from squall.client import download, nimbus_address, nimbus_client
from squall.code_package import CODE_FILE, CONF_FILE, STRUCTURE_FILE, unpack

from .backoff import Retry, after_failure, due

COMPLETE = ".complete"
THREADS = 4  # topologies fetched at once; a slow one holds one thread, never the loop


class CodeFetcher:
    def __init__(
        self, code_root: Path, fetch: Callable[[str, Path], None], wake: threading.Event
    ) -> None:
        """`fetch(tid, code_dir)` downloads and unpacks into an empty `code_dir`, raising on
        any failure; `wake` is set when a job ends so the loop acts on it at once."""
        self.code_root, self.fetch, self.wake = code_root, fetch, wake
        self.pool = ThreadPoolExecutor(THREADS, thread_name_prefix="code")
        self.jobs: dict[str, Future] = {}
        self.retries: dict[str, Retry] = {}

    def code_dir(self, tid: str) -> Path:
        return self.code_root / tid

    def ready(self, tid: str) -> bool:
        return tid not in self.jobs and (self.code_dir(tid) / COMPLETE).exists()

    def request(self, tids: Iterable[str], now: float) -> None:
        """Start a job for each topology whose code is missing, none in flight, retry due."""
        for tid in sorted(set(tids)):
            if tid in self.jobs or self.ready(tid) or not due(self.retries.get(tid), now):
                continue
            job = self.pool.submit(self._run, tid)
            job.add_done_callback(lambda _job: self.wake.set())
            self.jobs[tid] = job

    def _run(self, tid: str) -> None:
        code_dir = self.code_dir(tid)
        shutil.rmtree(code_dir, ignore_errors=True)
        code_dir.mkdir(parents=True)
        try:
            self.fetch(tid, code_dir)
        except BaseException:
            shutil.rmtree(code_dir, ignore_errors=True)
            raise
        (code_dir / COMPLETE).touch()

    def collect(self, now: float) -> list[tuple[str, str]]:
        """Jobs that ended: clear the retry of each success; return (tid, error) for each
        failure, whose next attempt is now delayed."""
        failed = []
        for tid, job in sorted(self.jobs.items()):
            if not job.done():
                continue
            del self.jobs[tid]
            exc = job.exception()
            if exc is None:
                self.retries.pop(tid, None)
                continue
            self.retries[tid] = after_failure(self.retries.get(tid), now)
            failed.append((tid, f"{type(exc).__name__}: {exc}"))
        return failed

    def busy(self, tid: str) -> bool:
        return tid in self.jobs

    def forget(self, keep: Iterable[str]) -> None:
        """Drop the retry state of topologies no longer assigned here."""
        wanted = set(keep)
        for tid in set(self.retries) - wanted:
            del self.retries[tid]

    def close(self) -> None:
        self.pool.shutdown(wait=False, cancel_futures=True)


def nimbus_session(conf: dict[str, Any]) -> Any:
    """A client of the leading nimbus as the supervisor identity (nimbus lets it only
    download code and confs, and find the leader)."""
    address = nimbus_address(conf, identity=SUPERVISOR)
    return nimbus_client(*address, conf=conf, identity=SUPERVISOR)


def fetch_code(conf: dict[str, Any], tid: str, code_dir: Path) -> None:
    """Download the topology's code and structure and unpack the code within the limits
    (on a fetcher thread, into an empty dir): they never change once submitted."""
    with nimbus_session(conf) as client:
        for name in (CODE_FILE, STRUCTURE_FILE):
            download(client, f"{tid}/{name}", code_dir / name)
    unpack(
        code_dir / CODE_FILE,
        code_dir / "code",
        conf["supervisor.code.max.bytes"],
        conf["supervisor.code.max.entries"],
    )


def fetch_conf(conf: dict[str, Any], tid: str, code_dir: Path) -> dict[str, Any]:
    """The topology conf as nimbus has it now, fetched for every worker start, so settings
    changed with `squall config set` reach workers as they (re)start."""
    with nimbus_session(conf) as client:
        download(client, f"{tid}/{CONF_FILE}", code_dir / CONF_FILE)
    return json.loads((code_dir / CONF_FILE).read_text())
