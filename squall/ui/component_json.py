"""Storm UI REST API v1 body for one component (/topology/:id/component/:component): its
figures per window, output streams, executors and errors, as a pure function of nimbus's
ComponentPageInfo; windows and null latencies as in topology_json."""

from __future__ import annotations

from typing import Any
from urllib.parse import quote

from squall.staleness import stale_json

from .cluster_json import pretty_uptime
from .topology_json import (
    SPOUT_TYPE,
    WINDOWS,
    LogLinks,
    bolt_json,
    common_fields,
    component_resources_json,
    error_link,
    latency,
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


def component_page(
    page: Any, window: str, now: float, owner: str = "", links: LogLinks | None = None
) -> dict[str, Any]:
    kind = page.component_type
    stats = page.window_to_stats or {}
    served, hint = window_hint(window, stats)
    debug = page.debug_options
    tid = page.topology_id or ""
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
                "workerLogLink": links.worker(s.host, s.port, tid) if links else "",
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
        "profilingAndDebuggingCapable": True,  # squall's workers carry the actions out
        "profileActionEnabled": True,
        "profilerActive": [],
        "schedulerDisplayResource": False,
        **component_resources_json(page.resources_map, "requestedGenericResources"),
        "componentErrors": [
            {
                "errorTime": e.error_time_secs,
                "errorHost": e.host or "",
                "errorPort": e.port,
                "error": e.error,
                "errorLapsedSecs": max(0, int(now) - e.error_time_secs),
                "errorWorkerLogLink": error_link(e, links, tid),
            }
            for e in sorted(page.errors or [], key=lambda e: -e.error_time_secs)
        ],
        "outputStats": [
            {"stream": stream, **{k: v for k, v in common_fields(s).items() if k in STREAM_KEYS}}
            for stream, s in sorted((page.sid_to_output_stats or {}).items())
        ],
        "executorStats": executors,
        **stale_json(page),  # squall: nimbus answered from what it last read, and why
    }
    if kind == SPOUT_TYPE:
        out["spoutSummary"] = rows
    else:
        out["boltStats"] = rows
        out["inputStats"] = [
            input_json(key, s)
            for key, s in sorted(
                (page.gsid_to_input_stats or {}).items(),
                key=lambda kv: (kv[0].componentId, kv[0].streamId),
            )
        ]
    return out


def input_json(key: Any, stats: Any) -> dict[str, Any]:
    """One input stream of a bolt, Storm's getBoltInputStats; figures nimbus could not
    attribute to this input (a bolt with several) are null."""
    bolt = stats.specific_stats.bolt if stats.specific_stats else None
    common = stats.common_stats
    return {
        "component": key.componentId,
        "encodedComponentId": quote(key.componentId, safe=""),
        "stream": key.streamId,
        "executeLatency": latency(bolt.execute_latency_ms if bolt else None),
        "processLatency": latency(bolt.process_latency_ms if bolt else None),
        "executed": bolt.executed if bolt else None,
        "acked": common.acked if common else None,
        "failed": common.failed if common else None,
    }


STREAM_KEYS = ("emitted", "transferred", "acked", "failed")
