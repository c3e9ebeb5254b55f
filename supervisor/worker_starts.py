"""How a supervisor starts the workers it may start: each with its topology's conf as nimbus
has it, downloaded off the sync loop (conf_fetcher.py), so a slow or unreachable nimbus, or
one topology's slow download, never holds up another topology's workers. A mixin of
Supervisor (daemon.py), which owns the state named below.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Iterable
from typing import Any

from squall.zk_identity import without_zk_logins

from .code_fetcher import CodeFetcher
from .conf_fetcher import ConfFetcher, confs_to_fetch, serves, waiting_since
from .launcher import SUBMITTER, Launcher
from .sync import WorkerKey, WorkerSpec
from .worker_failures import WorkerFailures

log = logging.getLogger("squall.supervisor")


class WorkerStarts(WorkerFailures):
    launcher: Launcher
    fetcher: CodeFetcher
    confs: ConfFetcher
    waiting: dict[WorkerKey, float]
    # a topology's ZooKeeper logins, by its id and submitter
    worker_auth: Callable[[str, str | None], dict[str, Any]]

    def _collect_confs(self, now: float) -> None:
        """A failed conf download is its topology's error; its next try backs off."""
        for tid, error in self.confs.collect(now):
            delay = self.confs.retries[tid].not_before - now
            log.warning("cannot fetch the conf of %s (retrying in %.0fs): %s", tid, delay, error)
            self._report(tid, None, f"cannot fetch the topology's conf: {error}")

    def _start_ready(self, ready: Iterable[WorkerSpec], now: float) -> None:
        """Start each worker that a downloaded conf serves; ask for the confs still missing.
        Nothing here waits on nimbus."""
        ready = list(ready)
        self.waiting = waiting_since(self.waiting, ready, now)
        missing = confs_to_fetch(self.waiting, self.confs.fetched)
        self.confs.request({tid: self.fetcher.code_dir(tid) for tid in missing}, now)
        for spec in ready:
            key = (spec.topology_id, spec.port)
            fetched = self.confs.fetched.get(spec.topology_id)
            if fetched is not None and serves(fetched, self.waiting[key]):
                del self.waiting[key]
                self._start_worker(spec, fetched.conf, now)

    def _start_worker(self, spec: WorkerSpec, topology_conf: dict[str, Any], now: float) -> None:
        """One worker's start; its failure (a user it cannot run as) is its topology's error,
        retried with back-off, and never keeps the other topologies' workers from starting.
        The worker gets its topology's ZooKeeper login, never the supervisor's or its host's."""
        key = (spec.topology_id, spec.port)
        try:
            code_dir = self.fetcher.code_dir(spec.topology_id)
            conf = without_zk_logins({**self.conf, **topology_conf})
            user = topology_conf.get(SUBMITTER) or None
            auth = self.worker_auth(spec.topology_id, user)
            self.launcher.start(spec, code_dir, {**conf, **auth})
        except Exception as exc:  # noqa: BLE001 - one topology must not stop the others
            log.warning("cannot start worker %s:%d: %s", spec.topology_id, spec.port, exc)
            self._failed(key, now, f"cannot start worker {key[0]}:{key[1]}: {exc}")
