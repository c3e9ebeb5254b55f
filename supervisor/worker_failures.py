"""What a supervisor does when a worker fails or cannot start: the failure becomes its
topology's error (never an orphan node of a topology that is gone) and the restart backs off,
so one broken topology neither floods ZooKeeper nor keeps the other topologies' workers from
starting. A mixin of Supervisor (daemon.py), which owns the state named below."""

from __future__ import annotations

import logging
from typing import Any

from squall.records import Assignment
from squall.zk_layout import ZkLayout

from .backoff import Retry, after_failure
from .code_fetcher import CodeFetcher, fetch_conf
from .error_reports import report_error
from .launcher import Launcher
from .sync import WorkerKey, WorkerSpec

log = logging.getLogger("squall.supervisor")


class WorkerFailures:
    conf: dict[str, Any]
    host: str
    zk: Any
    layout: ZkLayout
    launcher: Launcher
    fetcher: CodeFetcher
    restarts: dict[WorkerKey, Retry]
    accepted: dict[str, Assignment]
    worker_auth: dict[str, Any]

    def _failed(self, key: WorkerKey, now: float, text: str, ran_for: float = 0.0) -> None:
        """A worker failed: report it as its topology's error and back its restart off."""
        self.restarts[key] = after_failure(self.restarts.get(key), now, ran_for)
        delay = self.restarts[key].not_before - now
        self._report(key[0], key[1], f"{text}\n(restarting in {delay:.0f}s)")

    def _report(self, tid: str, port: int | None, text: str) -> None:
        """Record `text` as the topology's error, unless the topology is gone: its /errors
        subtree was removed with it and must not be recreated as an orphan."""
        if tid not in self.accepted:
            return
        report_error(self.zk, self.layout.errors(tid), text, self.host, port)

    def _start_worker(self, spec: WorkerSpec, now: float) -> None:
        """One worker's start; its failure (nimbus unreachable, a user it cannot run as) is
        its topology's error, retried with back-off, and never keeps the other topologies'
        workers from starting."""
        key = (spec.topology_id, spec.port)
        try:
            code_dir = self.fetcher.code_dir(spec.topology_id)
            topology_conf = fetch_conf(self.conf, spec.topology_id, code_dir)
            self.launcher.start(spec, code_dir, {**self.conf, **topology_conf, **self.worker_auth})
        except Exception as exc:  # noqa: BLE001 - one topology must not stop the others
            log.warning("cannot start worker %s:%d: %s", spec.topology_id, spec.port, exc)
            self._failed(key, now, f"cannot start worker {key[0]}:{key[1]}: {exc}")
