"""What the supervisor reads of its running workers, each loop: their heartbeats' seqs and
whether they are within their memory limit. The decisions are pure (slot.py,
memory.over_limit); these gather their inputs from ZooKeeper and /proc."""

from __future__ import annotations

import logging
from collections.abc import Iterable
from typing import Any

from squall.records import WorkerBeat
from squall.zk import connection as zk_mod
from squall.zk.layout import ZkLayout

from . import memory
from .launcher import Launcher
from .sync import WorkerKey

log = logging.getLogger("squall.supervisor")


def beat_seqs(
    zk: Any, layout: ZkLayout, supervisor_id: str, keys: Iterable[WorkerKey]
) -> dict[WorkerKey, int]:
    """The heartbeat seq each worker last wrote, where it wrote one (slot.py times when it
    changes, on the supervisor's clock)."""
    seqs = {}
    for tid, port in keys:
        path = layout.taskbeat(tid, supervisor_id, port)
        try:
            beat = zk_mod.read_record(zk, WorkerBeat, path)
        except ValueError as exc:
            log.warning("skipping a heartbeat: %s", exc)
            beat = None
        if beat is not None:
            seqs[(tid, port)] = beat.seq
    return seqs


def over_memory(launcher: Launcher) -> list[tuple[WorkerKey, str]]:
    """Running workers whose processes together hold more than their limit, with the error."""
    resident = launcher.resident(memory.resident_by_session())  # a cgroup's where it has one
    limits = launcher.memory_limits()
    over = [
        (k, memory.memory_error(limits[k], resident[k]))
        for k in memory.over_limit(resident, limits)
    ]
    return over + [(k, text) for k, text in launcher.oom_killed() if k not in dict(over)]
