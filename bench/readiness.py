"""When a submitted topology may be activated for a measurement: every task of it has beaten
and says it is ready. Shared by the bench scripts, which submit inactive and start the clock
at activation, so that worker start-up is not counted as processing time."""

from __future__ import annotations

from typing import Any


def all_ready(conf: dict[str, Any], name: str) -> bool:
    from squall.records import WorkerBeat
    from squall.zk import connection as zk_mod

    zk = zk_mod.connect(conf, "nimbus")
    try:
        lay = zk_mod.layout(conf)
        tid = next(t for t in zk.get_children(lay.storms) if t.startswith(f"{name}-"))
        beats = zk_mod.read_records(zk, WorkerBeat, lay.taskbeats(tid))
        tasks = zk.get_children(lay.tasks(tid))
        stats = {t: s for b in beats.values() for t, s in b.tasks.items()}
        return len(stats) == len(tasks) and all(s.get("ready") for s in stats.values())
    finally:
        zk.stop()
        zk.close()
