"""Nimbus's reads of ZooKeeper: what the cluster holds now, record by record. A node that
does not hold its record (a hostile or broken writer) is skipped and logged, never fatal:
nimbus's state is rebuilt from these reads on every lead and every monitor round."""

from __future__ import annotations

import json
import logging
from collections.abc import Iterable, Mapping
from typing import Any, TypeVar

from kazoo.client import KazooClient
from kazoo.exceptions import NoNodeError

from squall.records import (
    Assignment,
    ErrorReport,
    NimbusInfo,
    RecordError,
    Slot,
    StormBase,
    SupervisorInfo,
    WorkerBeat,
    decode,
)
from squall.zk import connection as zk_mod
from squall.zk.layout import ZkLayout

R = TypeVar("R")
log = logging.getLogger("squall.nimbus")


class ClusterReads:
    def __init__(self, zk: KazooClient, layout: ZkLayout) -> None:
        self.zk = zk
        self.layout = layout

    def _children(self, path: str) -> list[str]:
        return zk_mod.children(self.zk, path)

    def _read_all(self, cls: type[R], parent: str) -> dict[str, R]:
        return zk_mod.read_records(self.zk, cls, parent)

    def storm_ids(self) -> list[str]:
        return self._children(self.layout.storms)

    def assignment_ids(self) -> list[str]:
        return self._children(self.layout.assignments)

    def read_bases(self) -> dict[str, StormBase]:
        return self._read_all(StormBase, self.layout.storms)

    def read_assignments(self) -> dict[str, Assignment]:
        return self._read_all(Assignment, self.layout.assignments)

    def read_tasks(self, topology_ids: Iterable[str]) -> dict[str, dict[int, str]]:
        """Each topology's /tasks (task -> component), all read in two round trips."""
        tids = sorted(topology_ids)
        parents = [self.layout.tasks(tid) for tid in tids]
        return dict(zip(tids, zk_mod.read_task_components(self.zk, parents), strict=True))

    def read_supervisors(
        self, known: Mapping[str, SupervisorInfo] | None = None
    ) -> dict[str, SupervisorInfo]:
        """Every registered supervisor. With `known`, the ones it holds are taken from it and
        only new ones are read: a supervisor change then costs the list of names and what
        changed, not a read of every host (the monitor round reads them all again)."""
        if known is None:
            return self._read_all(SupervisorInfo, self.layout.supervisors)
        names = self._children(self.layout.supervisors)
        fresh = zk_mod.read_named(
            self.zk, SupervisorInfo, self.layout.supervisors, [n for n in names if n not in known]
        )
        return {n: known[n] if n in known else fresh[n] for n in names if n in known or n in fresh}

    def read_beats(self, topology_id: str) -> dict[Slot, WorkerBeat]:
        beats = {}
        for child, beat in self._read_all(WorkerBeat, self.layout.taskbeats(topology_id)).items():
            node, _, port = child.rpartition("-")
            if port.isdigit():
                beats[(node, int(port))] = beat
        return beats

    def read_errors(self, topology_id: str) -> dict[str, list[dict[str, Any]]]:
        """/errors/[id]/[component]: the last errors a component's tasks reported; a node or
        an entry that is not an error report is skipped (and logged)."""
        out = {}
        parent = self.layout.errors(topology_id)
        for component in self._children(parent):
            path = f"{parent}/{component}"
            try:
                data, _ = self.zk.get(path)
                entries = json.loads(data.decode())
            except NoNodeError:
                continue
            except (ValueError, UnicodeDecodeError, RecursionError):
                log.warning("skipping %s: not a JSON list of error reports", path)
                continue
            if not isinstance(entries, list):
                log.warning("skipping %s: not a JSON list of error reports", path)
                continue
            reports = [r for r in (_error_report(e, path) for e in entries) if r is not None]
            out[component] = [
                {"error": r.error, "time_secs": r.time_secs, "host": r.host, "port": r.port}
                for r in reports
            ]
        return out

    def read_nimbuses(self) -> dict[str, NimbusInfo]:
        """Every registered nimbus; a node that is not a nimbus record is skipped."""
        return self._read_all(NimbusInfo, self.layout.nimbuses)


def _error_report(entry: Any, where: str) -> ErrorReport | None:
    try:
        return decode(ErrorReport, json.dumps(entry).encode(), where)
    except RecordError as exc:
        log.warning("skipping an error report: %s", exc)
        return None
