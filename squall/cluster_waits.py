"""Waiting on a running cluster: poll a condition to a deadline, and read a topology's progress
from its worker heartbeats in ZooKeeper. Tests wait on these conditions instead of sleeping."""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import Any

from squall.records import Assignment, WorkerBeat
from squall.zk import connection as zk_mod


class ClusterError(RuntimeError):
    """The local cluster did not come up, or a wait ran past its deadline."""


def wait_for(condition: Callable[[], Any], timeout: float, what: str, interval: float = 0.2) -> Any:
    """Poll `condition` until it returns something truthy; raise ClusterError at the deadline."""
    deadline = time.monotonic() + timeout
    while True:
        try:
            result = condition()
        except Exception:  # noqa: BLE001 - not ready yet (connection refused, no node...)
            result = None
        if result:
            return result
        if time.monotonic() > deadline:
            raise ClusterError(f"timed out after {timeout:.0f}s waiting for {what}")
        time.sleep(interval)


def topology_id(client: Any, name: str) -> str | None:
    for summary in client.getClusterInfo().topologies:
        if summary.name == name:
            return summary.id
    return None


def topology_progress(conf: dict[str, Any], tid: str) -> dict[str, Any] | None:
    """Sum the tasks' counters from their worker beats; None until every task has beaten."""
    zk = zk_mod.connect(conf, "nimbus")
    try:
        lay = zk_mod.layout(conf)
        assignment = zk_mod.read_record(zk, Assignment, lay.assignment(tid))
        beats = zk_mod.read_records(zk, WorkerBeat, lay.taskbeats(tid))
    finally:
        zk.stop()
        zk.close()
    if assignment is None:
        return None
    stats = {t: s for beat in beats.values() for t, s in beat.tasks.items()}
    if set(assignment.task_slots) - set(stats):
        return None
    return {
        "transferred": sum(sum(s["transferred"].values()) for s in stats.values()),
        "executed": sum(s["executed"] for s in stats.values()),
        "emitted": sum(sum(s["emitted"].values()) for s in stats.values()),
        "errors": sum(s["errors"] for s in stats.values()),
        "pending": sum(s.get("pending", 0) for s in stats.values()),
        # spouts' (bolts count their failed inputs too; a spout's `idle` is set, a bolt's None)
        "failed": sum(s.get("failed", 0) for s in stats.values() if s["idle"] is not None),
        "acked": sum(s.get("acked", 0) for s in stats.values() if s["idle"] is not None),
        "spouts_idle": all(s["idle"] for s in stats.values() if s["idle"] is not None),
        "seqs": tuple(sorted(b.seq for b in beats.values())),
    }


def wait_until_quiet(
    conf: dict[str, Any],
    tid: str,
    timeout: float,
    on_progress: Callable[[dict[str, Any] | None], None] | None = None,
) -> dict[str, Any]:
    """Wait until the spouts are idle and every transferred tuple was executed, twice in a
    row across fresh heartbeats: a topology whose spouts ran dry has finished its work.
    `on_progress` sees each look (None while a task has not beaten yet)."""
    previous: dict[str, Any] = {}

    def quiet() -> dict[str, Any] | None:
        nonlocal previous
        now = topology_progress(conf, tid)
        if on_progress is not None:
            on_progress(now)
        if now is None:
            return None
        done = (
            now["spouts_idle"]
            and now["pending"] == 0
            and now["transferred"] == now["executed"]
            and now["emitted"]
        )
        stable = (
            previous
            and previous["seqs"] != now["seqs"]
            and all(previous[k] == now[k] for k in ("transferred", "executed", "emitted"))
        )
        previous = now
        return now if done and stable else None

    return wait_for(quiet, timeout, f"topology {tid} to finish its input", interval=1.0)
