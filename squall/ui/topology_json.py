"""Storm UI REST API v1 bodies for one topology (/topology/:id, .../component/:c,
.../visualization), as pure functions of nimbus's page infos; `now` is passed in.

Windows: Storm's UI offers 600, 10800, 86400 s and all-time. squall's nimbus keeps all-time
counters only, so a window nimbus has no figures for is answered with the all-time ones and
says so in windowHint; never with numbers made up for it. Latencies and capacity nimbus did
not measure (unset in Thrift) are null, not Storm's "0.000", which would claim an idle bolt.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any
from urllib.parse import quote

from .cluster_json import pretty_uptime, worker_json

ALL_TIME = ":all-time"
WINDOWS = {"600": "10m 0s", "10800": "3h 0m 0s", "86400": "1d 0h 0m 0s", ALL_TIME: "All time"}
SPOUT_TYPE, BOLT_TYPE = 2, 1  # Thrift ComponentType
ALL_TIME_ONLY = "All time (squall counts all-time only; no {} window)"


_TIMEOUT = "topology.message.timeout.secs"


class BadRequest(ValueError):
    """A request parameter Storm's UI would refuse; answered with a 400."""


def parse_window(raw: str | None) -> str:
    window = raw or ALL_TIME
    if window not in WINDOWS:
        raise BadRequest(f"window must be one of {', '.join(WINDOWS)}; got {window!r}")
    return window


def parse_sys(raw: str | None) -> bool:
    if raw in (None, "", "0", "false"):
        return False
    if raw in ("1", "true"):
        return True
    raise BadRequest(f"sys must be 0 or 1; got {raw!r}")


def window_hint(window: str, available: Mapping[str, Any]) -> tuple[str, str]:
    """The window whose figures are served, and Storm's windowHint for it."""
    if window in available:
        return window, WINDOWS[window]
    return ALL_TIME, ALL_TIME_ONLY.format(WINDOWS[window])


def latency(value: float | None) -> str | None:
    return None if value is None else f"{value:.3f}"


def _error_fields(error: Any, now: float) -> dict[str, Any]:
    if error is None:
        return {
            "lastError": "",
            "errorHost": "",
            "errorPort": None,
            "errorTime": None,
            "errorLapsedSecs": None,
            "errorWorkerLogLink": "",
        }
    return {
        "lastError": error.error,
        "errorHost": error.host or "",
        "errorPort": error.port,
        "errorTime": error.error_time_secs,
        "errorLapsedSecs": max(0, int(now) - error.error_time_secs),
        "errorWorkerLogLink": "",
    }


def _common(stats: Any) -> dict[str, Any]:
    c = stats.common_stats
    return {
        "executors": c.num_executors or 0,
        "tasks": c.num_tasks or 0,
        "emitted": c.emitted or 0,
        "transferred": c.transferred or 0,
        "acked": c.acked or 0,
        "failed": c.failed or 0,
    }


def _no_resources() -> dict[str, float]:
    return {"requestedMemOnHeap": 0.0, "requestedMemOffHeap": 0.0, "requestedCpu": 0.0}


def spout_json(name: str, stats: Any, now: float) -> dict[str, Any]:
    spout = stats.specific_stats.spout if stats.specific_stats else None
    return {
        "spoutId": name,
        "encodedSpoutId": quote(name, safe=""),
        **_common(stats),
        "completeLatency": latency(spout.complete_latency_ms if spout else None),
        **_error_fields(stats.last_error, now),
        **_no_resources(),
    }


def bolt_json(name: str, stats: Any, now: float) -> dict[str, Any]:
    bolt = stats.specific_stats.bolt if stats.specific_stats else None
    return {
        "boltId": name,
        "encodedBoltId": quote(name, safe=""),
        **_common(stats),
        "executed": (bolt.executed or 0) if bolt else 0,
        "executeLatency": latency(bolt.execute_latency_ms if bolt else None),
        "processLatency": latency(bolt.process_latency_ms if bolt else None),
        "capacity": latency(bolt.capacity if bolt else None),
        **_error_fields(stats.last_error, now),
        **_no_resources(),
    }


def _topology_stats(ts: Any) -> list[dict[str, Any]]:
    emitted = ts.window_to_emitted or {}
    out = []
    for window in [w for w in WINDOWS if w in emitted]:
        complete = (ts.window_to_complete_latencies_ms or {}).get(window)
        out.append(
            {
                "windowPretty": WINDOWS[window],
                "window": window,
                "emitted": emitted.get(window, 0),
                "transferred": (ts.window_to_transferred or {}).get(window, 0),
                "completeLatency": latency(complete),
                "acked": (ts.window_to_acked or {}).get(window, 0),
                "failed": (ts.window_to_failed or {}).get(window, 0),
            }
        )
    return out


def topology_page(
    page: Any, window: str, now: float, defaults: Mapping[str, Any] | None = None
) -> dict[str, Any]:
    """`defaults`: the cluster's conf, for what the topology's own conf leaves unset."""
    conf = json.loads(page.topology_conf or "{}")
    timeout = conf.get("topology.message.timeout.secs", (defaults or {}).get(_TIMEOUT))
    ts = page.topology_stats
    served, hint = window_hint(window, (ts.window_to_emitted or {}) if ts else {})
    debug = page.debug_options
    return {
        "id": page.id,
        "encodedId": quote(page.id, safe=""),
        "name": page.name,
        "owner": page.owner or "",
        "uptime": pretty_uptime(page.uptime_secs or 0),
        "uptimeSeconds": page.uptime_secs or 0,
        "status": page.status,
        "tasksTotal": page.num_tasks or 0,
        "workersTotal": page.num_workers or 0,
        "executorsTotal": page.num_executors or 0,
        "msgTimeout": timeout,
        "window": served,
        "windowHint": hint,
        "schedulerDisplayResource": False,
        "replicationCount": page.replication_count or 1,
        "debug": bool(debug and debug.enable),
        "samplingPct": (debug.samplingpct if debug and debug.samplingpct else 0.0),
        "assignedMemOnHeap": 0.0,
        "assignedMemOffHeap": 0.0,
        "assignedTotalMem": 0.0,
        "assignedCpu": 0.0,
        "requestedMemOnHeap": 0.0,
        "requestedMemOffHeap": 0.0,
        "requestedTotalMem": 0.0,
        "requestedCpu": 0.0,
        "topologyStats": _topology_stats(ts) if ts else [],
        "workers": [worker_json(w) for w in page.workers or []],
        "spouts": [
            spout_json(n, s, now) for n, s in sorted((page.id_to_spout_agg_stats or {}).items())
        ],
        "bolts": [
            bolt_json(n, s, now) for n, s in sorted((page.id_to_bolt_agg_stats or {}).items())
        ],
        "configuration": conf,
    }


def _window_row(kind: int, window: str, stats: Any) -> dict[str, Any]:
    row: dict[str, Any] = {"windowPretty": WINDOWS.get(window, window), "window": window}
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
        **_no_resources(),
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
            {"stream": stream, **{k: v for k, v in _common(s).items() if k in _STREAM_KEYS}}
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


_STREAM_KEYS = ("emitted", "transferred", "acked", "failed")


def grouping_name(grouping: Any) -> str:
    for name in ("fields", "shuffle", "all", "none", "direct", "local_or_shuffle"):
        value = getattr(grouping, name, None)
        if value is not None:
            return "global" if name == "fields" and not value else name
    return "custom"


def visualization(topology: Any, page: Any) -> dict[str, Any]:
    """Storm's visualization data: per component its type, figures and input edges."""
    spouts = page.id_to_spout_agg_stats or {}
    bolts = page.id_to_bolt_agg_stats or {}
    out: dict[str, Any] = {}
    for kind, specs, stats in (("spout", topology.spouts, spouts), ("bolt", topology.bolts, bolts)):
        for name, spec in sorted((specs or {}).items()):
            agg = stats.get(name)
            row = (spout_json if kind == "spout" else bolt_json)(name, agg, 0) if agg else {}
            out[name] = {
                ":type": kind,
                ":capacity": row.get("capacity"),
                ":latency": row.get("completeLatency" if kind == "spout" else "processLatency"),
                ":transferred": row.get("transferred", 0),
                ":emitted": row.get("emitted", 0),
                ":executed": row.get("executed", 0),
                ":stats": [],
                ":link": f"/api/v1/topology/{quote(page.id, safe='')}/component/"
                + quote(name, safe=""),
                ":inputs": [
                    {
                        ":component": gsid.componentId,
                        ":stream": gsid.streamId,
                        ":sani-stream": "".join(c if c.isalnum() else "_" for c in gsid.streamId),
                        ":grouping": grouping_name(grouping),
                    }
                    for gsid, grouping in sorted(
                        (spec.common.inputs or {}).items(),
                        key=lambda kv: (kv[0].componentId, kv[0].streamId),
                    )
                ],
            }
    return out
