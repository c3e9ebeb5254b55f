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
from .error_reports import report_error
from .sync import WorkerKey

log = logging.getLogger("squall.supervisor")


class WorkerFailures:
    conf: dict[str, Any]
    host: str
    zk: Any
    layout: ZkLayout
    restarts: dict[WorkerKey, Retry]
    accepted: dict[str, Assignment]

    def _failed(self, key: WorkerKey, now: float, text: str, ran_for: float = 0.0) -> None:
        """A worker failed: report it as its topology's error and back its restart off."""
        delay = self._back_off(key, now, ran_for)
        self._report(key[0], key[1], f"{text}\n(restarting in {delay:.0f}s)")

    def _back_off(self, key: WorkerKey, now: float, ran_for: float = 0.0) -> float:
        """Hold the slot's next start back (the seconds it waits)."""
        self.restarts[key] = after_failure(self.restarts.get(key), now, ran_for)
        return self.restarts[key].not_before - now

    def _report(self, tid: str, port: int | None, text: str) -> None:
        """Record `text` as the topology's error, unless the topology is gone: its /errors
        subtree was removed with it and must not be recreated as an orphan."""
        if tid not in self.accepted:
            return
        report_error(self.zk, self.layout.errors(tid), text, self.host, port)
