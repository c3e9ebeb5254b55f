"""Storm UI REST API v1 bodies for one topology (/topology/:id, .../component/:c,
.../visualization), as pure functions of nimbus's page infos; `now` is passed in.

Windows: Storm's UI offers 600, 10800, 86400 s and all-time, and nimbus serves all four
(from the workers' rolling windows). Should a nimbus answer without a window (an older one),
the all-time figures are served and windowHint says so; never numbers made up for it.
Latencies and capacity nimbus did not measure (unset in Thrift) are null, not Storm's
"0.000", which would claim an idle bolt.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any
from urllib.parse import quote

from squall.staleness import stale_json

from .cluster_json import (
    generic,
    pretty_generic,
    pretty_uptime,
    topology_resources_json,
    worker_json,
)
from .errors import BadRequest
from .log_files import LogLinks

ALL_TIME = ":all-time"
WINDOWS = {"600": "10m 0s", "10800": "3h 0m 0s", "86400": "1d 0h 0m 0s", ALL_TIME: "All time"}
SPOUT_TYPE, BOLT_TYPE = 2, 1  # Thrift ComponentType
ALL_TIME_ONLY = "All time (nimbus served no {} window)"


_TIMEOUT = "topology.message.timeout.secs"


def is_system(name: str) -> bool:
    """Storm's Utils.isSystemId: system components and streams start with two underscores."""
    return name.startswith("__")


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


def _error_fields(error: Any, now: float, link: str = "") -> dict[str, Any]:
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
        "errorWorkerLogLink": link,
    }


def common_fields(stats: Any) -> dict[str, Any]:
    c = stats.common_stats
    return {
        "executors": c.num_executors or 0,
        "tasks": c.num_tasks or 0,
        "emitted": c.emitted or 0,
        "transferred": c.transferred or 0,
        "acked": c.acked or 0,
        "failed": c.failed or 0,
    }


def component_resources_json(
    resources: Mapping[str, float] | None, generic_key: str = "requestedGenericResourcesComp"
) -> dict[str, Any]:
    """What one task of a component declared, from its resources_map (Storm's
    CommonAggregateStats and ComponentPageInfo: memory and CPU under Storm's names, the rest
    generic resources; 0 and none from a nimbus that does not say). Storm names the generic
    ones requestedGenericResourcesComp in a topology page's component rows,
    requestedGenericResources on a component's page."""
    r = resources or {}
    return {
        "requestedMemOnHeap": float(r.get("onheap.memory.mb", 0.0)),
        "requestedMemOffHeap": float(r.get("offheap.memory.mb", 0.0)),
        "requestedCpu": float(r.get("cpu.pcore.percent", 0.0)),
        generic_key: pretty_generic(generic(dict(r))),
    }


def error_link(error: Any, links: LogLinks | None, tid: str) -> str:
    """The log of the worker that reported `error` (Storm's errorWorkerLogLink)."""
    if error is None or links is None:
        return ""
    return links.worker(error.host, error.port, tid)


def spout_json(
    name: str, stats: Any, now: float, links: LogLinks | None = None, tid: str = ""
) -> dict[str, Any]:
    spout = stats.specific_stats.spout if stats.specific_stats else None
    return {
        "spoutId": name,
        "encodedSpoutId": quote(name, safe=""),
        **common_fields(stats),
        "completeLatency": latency(spout.complete_latency_ms if spout else None),
        **_error_fields(stats.last_error, now, error_link(stats.last_error, links, tid)),
        **component_resources_json(stats.common_stats.resources_map),
    }


def bolt_json(
    name: str, stats: Any, now: float, links: LogLinks | None = None, tid: str = ""
) -> dict[str, Any]:
    bolt = stats.specific_stats.bolt if stats.specific_stats else None
    return {
        "boltId": name,
        "encodedBoltId": quote(name, safe=""),
        **common_fields(stats),
        "executed": (bolt.executed or 0) if bolt else 0,
        "executeLatency": latency(bolt.execute_latency_ms if bolt else None),
        "processLatency": latency(bolt.process_latency_ms if bolt else None),
        "capacity": latency(bolt.capacity if bolt else None),
        **_error_fields(stats.last_error, now, error_link(stats.last_error, links, tid)),
        **component_resources_json(stats.common_stats.resources_map),
        **spark_fields(bolt),
    }


def spark_fields(bolt: Any) -> dict[str, Any]:
    """squall's own fields, a SparkBolt's only: its micro-batches (Spark jobs) in the
    window, the rows they took and the average time of one."""
    if bolt is None or not bolt.spark_jobs:
        return {}
    return {
        "sparkJobs": bolt.spark_jobs,
        "sparkRows": bolt.spark_rows or 0,
        "sparkJobLatency": latency(bolt.spark_job_ms),
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
    links = LogLinks.from_conf(defaults or {})
    return {
        "id": page.id,
        "encodedId": quote(page.id, safe=""),
        "name": page.name,
        "owner": page.owner or "",
        "uptime": pretty_uptime(page.uptime_secs or 0),
        "uptimeSeconds": page.uptime_secs or 0,
        "status": page.status,
        # the scheduler's word and, when tasks are not running, how many and why
        "schedulerInfo": page.sched_status or "",
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
        **topology_resources_json(page),
        "topologyStats": _topology_stats(ts) if ts else [],
        "workers": [worker_json(w, links) for w in page.workers or []],
        "spouts": [
            spout_json(n, s, now, links, page.id)
            for n, s in sorted((page.id_to_spout_agg_stats or {}).items())
        ],
        "bolts": [
            bolt_json(n, s, now, links, page.id)
            for n, s in sorted((page.id_to_bolt_agg_stats or {}).items())
        ],
        "configuration": conf,
        **stale_json(page),  # squall: nimbus answered from what it last read, and why
    }
