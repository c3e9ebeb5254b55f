"""Each topology's conf, fetched from nimbus off the sync loop for the workers about to start.

A worker gets its topology's conf as nimbus has it when the worker (re)starts, so settings
changed with `squall config set` reach it. That fetch used to run on the sync loop, with the
Thrift client's timeout (120 s): a slow or unreachable nimbus, or one topology's slow conf
download, held up every other topology's worker starts. Now a start that may go waits for a
conf whose download was asked for no earlier than the start became possible (`serves`); the
loop asks for one per topology (topology_jobs.py) and starts the worker on a later pass, when
the download has ended. A failed download is that topology's error, retried with back-off.
"""

from __future__ import annotations

import functools
import json
import threading
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from squall.client import fetch
from squall.code_package import CONF_FILE
from squall.zk.identity import replace_file

from .backoff import Retry
from .code_fetcher import nimbus_session
from .topology_jobs import Done, TopologyJobs


@dataclass(frozen=True)
class FetchedConf:
    """A topology conf and when its download was asked for (the loop's monotonic clock)."""

    began: float
    conf: dict[str, Any]


class ConfFetcher:
    def __init__(self, fetch: Callable[[str, Path], dict[str, Any]], wake: threading.Event) -> None:
        """`fetch(tid, code_dir)` returns the topology conf as nimbus has it now, raising on
        any failure; it runs on a job's thread."""
        self.fetch = fetch
        self.jobs = TopologyJobs("conf", wake)
        self.fetched: dict[str, FetchedConf] = {}

    @property
    def retries(self) -> dict[str, Retry]:
        return self.jobs.retries

    def request(self, dirs: Mapping[str, Path], now: float) -> None:
        """Start a download for each topology named (to its code dir), unless one is in
        flight or its retry is not due."""
        for tid, code_dir in sorted(dirs.items()):
            self.jobs.start(tid, functools.partial(self.fetch, tid, code_dir), now)

    def collect(self, now: float) -> list[tuple[str, str]]:
        """Keep each conf downloaded; return (tid, error) for each failed download."""
        failed = []
        for done in self.jobs.collect(now):
            if done.error is not None:
                failed.append((done.topology_id, done.error))
            else:
                self._keep(done)
        return failed

    def _keep(self, done: Done) -> None:
        old = self.fetched.get(done.topology_id)
        if old is None or old.began <= done.began:
            self.fetched[done.topology_id] = FetchedConf(done.began, done.result)

    def busy(self, tid: str) -> bool:
        return self.jobs.busy(tid)

    def forget(self, keep: Iterable[str]) -> None:
        """Drop the confs and retry state of topologies no longer assigned here."""
        wanted = set(keep)
        self.jobs.forget(wanted)
        for tid in set(self.fetched) - wanted:
            del self.fetched[tid]


def fetch_conf(
    conf: dict[str, Any],
    tid: str,
    code_dir: Path,
    session: Callable[[dict[str, Any]], Any] = nimbus_session,
) -> dict[str, Any]:
    """The topology conf as nimbus has it now (on a conf job's thread). `session` opens the
    client: the leading nimbus's, as the supervisor identity."""
    with session(conf) as client:
        data = fetch(client, f"{tid}/{CONF_FILE}")
    replace_file(code_dir / CONF_FILE, [data])
    return json.loads(data)  # not read back: the worker's user may own the directory
