"""Storm UI REST API v1 body for one component (/topology/:id/component/:component): its
figures per window, output streams, executors and errors, as a pure function of nimbus's
ComponentPageInfo; windows and null latencies as in topology_json."""

from __future__ import annotations

from typing import Any
from urllib.parse import quote

from .cluster_json import pretty_uptime
from .topology_json import (
    SPOUT_TYPE,
    WINDOWS,
    bolt_json,
    common_fields,
    no_resources,
    spout_json,
    window_hint,
)


def _window_row(kind: int, window: str, stats: Any) -> dict[str, Any]:
    row: dict[str, Any] = {"windowPretty": WINDOWS.get(window, window), "window": window}
    keep: tuple[str, ...]
    if kind == SPOUT_TYPE:
        row.update(spout_json("", stats, 0))
        keep = ("emitted", "transferred", "completeLatency", "acked", "failed")
    else:
        row.update(bolt_json("", stats, 0))
        keep = (
            "emitted",
            "transferred",
            "executed",
            "executeLatency",
            "processLatency",
            "capacity",
            "acked",
            "failed",
            "sparkJobs",
            "sparkRows",
            "sparkJobLatency",
        )
    return {k: v for k, v in row.items() if k in keep or k in ("windowPretty", "window")}


def component_page(page: Any, window: str, now: float, owner: str = "") -> dict[str, Any]:
    kind = page.component_type
    stats = page.window_to_stats or {}
    served, hint = window_hint(window, stats)
    debug = page.debug_options
    rows = [_window_row(kind, w, stats[w]) for w in WINDOWS if w in stats]
    executors = []
    for e in page.exec_stats or []:
        s = e.exec_summary
        one = _window_row(kind, served, e.stats)
        one.pop("windowPretty")
        one.pop("window")
        info = s.executor_info
        executors.append(
            {
                "id": f"[{info.task_start}-{info.task_end}]",
                "encodedId": quote(f"[{info.task_start}-{info.task_end}]", safe=""),
                "host": s.host,
                "port": s.port,
                "uptime": pretty_uptime(s.uptime_secs),
                "uptimeSeconds": s.uptime_secs,
                "workerLogLink": "",
                **one,
            }
        )
    out: dict[str, Any] = {
        "user": owner,
        "id": page.component_id,
        "encodedId": quote(page.component_id, safe=""),
        "name": page.topology_name,
        "componentType": "spout" if kind == SPOUT_TYPE else "bolt",
        "executors": page.num_executors or 0,
        "tasks": page.num_tasks or 0,
        "topologyId": page.topology_id,
        "encodedTopologyId": quote(page.topology_id or "", safe=""),
        "topologyStatus": page.topology_status,
        "window": served,
        "windowHint": hint,
        "debug": bool(debug and debug.enable),
        "samplingPct": (debug.samplingpct if debug and debug.samplingpct else 0.0),
        "eventLogLink": "",
        "profilingAndDebuggingCapable": False,
        "profileActionEnabled": False,
        "profilerActive": [],
        "schedulerDisplayResource": False,
        **no_resources(),
        "componentErrors": [
            {
                "errorTime": e.error_time_secs,
                "errorHost": e.host or "",
                "errorPort": e.port,
                "error": e.error,
                "errorLapsedSecs": max(0, int(now) - e.error_time_secs),
                "errorWorkerLogLink": "",
            }
            for e in sorted(page.errors or [], key=lambda e: -e.error_time_secs)
        ],
        "outputStats": [
            {"stream": stream, **{k: v for k, v in common_fields(s).items() if k in STREAM_KEYS}}
            for stream, s in sorted((page.sid_to_output_stats or {}).items())
        ],
        "executorStats": executors,
    }
    if kind == SPOUT_TYPE:
        out["spoutSummary"] = rows
    else:
        out["boltStats"] = rows
        out["inputStats"] = []  # squall does not count executions per input stream
    return out


STREAM_KEYS = ("emitted", "transferred", "acked", "failed")
