"""Each topology's code, downloaded and unpacked off the sync loop, one job per topology.

A package that is slow, huge or refused used to stop every other topology on the supervisor
from starting or restarting workers (a killed worker of another topology came back 152 s
later) and its submitter saw no error. Here the sync loop only asks for code and starts the
workers whose code is ready; each download runs on a thread of its own, at most one per
topology (topology_jobs.py), so no slow package holds up another's, and a failure is handed
back to the loop to report as that topology's error and retry with back-off (backoff.py).
"""

from __future__ import annotations

import functools
import shutil
import threading
from collections.abc import Callable, Iterable
from pathlib import Path
from typing import Any

from squall.client import download, nimbus_address, nimbus_client
from squall.code_package import CODE_FILE, STRUCTURE_FILE, PackageError, unpack
from squall.security.certificates import SUPERVISOR

from .backoff import Retry
from .topology_jobs import TopologyJobs

COMPLETE = ".complete"


class CodeFetcher:
    def __init__(
        self, code_root: Path, fetch: Callable[[str, Path], None], wake: threading.Event
    ) -> None:
        """`fetch(tid, code_dir)` downloads and unpacks into an empty `code_dir`, raising on
        any failure; `wake` is set when a job ends so the loop acts on it at once."""
        self.code_root, self.fetch = code_root, fetch
        self.jobs = TopologyJobs("code", wake)

    @property
    def retries(self) -> dict[str, Retry]:
        return self.jobs.retries

    def code_dir(self, tid: str) -> Path:
        return self.code_root / tid

    def ready(self, tid: str) -> bool:
        return not self.jobs.busy(tid) and (self.code_dir(tid) / COMPLETE).exists()

    def request(self, tids: Iterable[str], now: float) -> None:
        """Start a job for each topology whose code is missing, none in flight, retry due."""
        for tid in sorted(set(tids)):
            if not self.ready(tid):
                self.jobs.start(tid, functools.partial(self._run, tid), now)

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
        return [(d.topology_id, d.error) for d in self.jobs.collect(now) if d.error is not None]

    def busy(self, tid: str) -> bool:
        return self.jobs.busy(tid)

    def forget(self, keep: Iterable[str]) -> None:
        """Drop the retry state of topologies no longer assigned here."""
        self.jobs.forget(keep)


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
    try:
        unpack(
            code_dir / CODE_FILE,
            code_dir / "code",
            conf["supervisor.code.max.bytes"],
            conf["supervisor.code.max.entries"],
        )
    except PackageError as exc:
        raise PackageError(unpack_problem(str(exc))) from exc


def unpack_problem(problem: str) -> str:
    """A package nimbus accepted at submit that does not unpack here: the two ways that
    happens, and what to do about each (the bare "cannot unpack the tgz" said neither)."""
    return (
        f"{problem} (nimbus accepted this package at submit: either its copy is damaged, "
        "then kill the topology and submit it again, or this supervisor's "
        "supervisor.code.max.bytes or supervisor.code.max.entries is below nimbus's)"
    )
