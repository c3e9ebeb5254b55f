"""Storm UI REST API v1 body of /topology/:id/metrics: each component's figures per stream
for one window, as the documented shape (docs/STORM-UI-REST-API.md): spouts' emitted,
transferred, acked, failed and complete_ms_avg per output stream; bolts' emitted and
transferred per output stream, and acked, failed, executed, process_ms_avg and
executed_ms_avg per input (component_id, stream_id). A pure function of getTopologyInfo's
ExecutorStats, which nimbus fills per Storm window.

squall counts a bolt's executions per task, not per input: a bolt with one input stream has
its figures under that input; one with several has none per input (nimbus leaves them out
rather than invent a split). Averages are weighted as Storm's (complete latency by acked,
process and execute latency by executed) and shown as Storm's "%.3f" strings.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from .topology_json import WINDOWS, is_system


def _add(into: dict[Any, int], counts: Mapping[Any, int] | None) -> None:
    for key, n in (counts or {}).items():
        into[key] = into.get(key, 0) + (n or 0)


def _weigh(into: dict[Any, list[float]], avgs: Mapping[Any, float], weights: Mapping) -> None:
    """Sums of avg * weight and of weight per key, for a weighted average."""
    for key, avg in (avgs or {}).items():
        if avg is None:
            continue
        weight = (weights or {}).get(key) or 0
        total = into.setdefault(key, [0.0, 0])
        total[0] += avg * weight
        total[1] += weight


def _input(key: Any) -> tuple[str, str]:
    return key.componentId, key.streamId


def _rows(values: Mapping[Any, Any], inputs: bool) -> list[dict[str, Any]]:
    out = []
    for key in sorted(values, key=str):
        row: dict[str, Any] = (
            {"component_id": key[0], "stream_id": key[1]} if inputs else {"stream_id": key}
        )
        out.append({**row, "value": values[key]})
    return out


def _averages(sums: Mapping[Any, list[float]]) -> dict[Any, str]:
    return {k: f"{total / n:.3f}" for k, (total, n) in sums.items() if n > 0}


def topology_metrics(info: Any, window: str, include_sys: bool) -> dict[str, Any]:
    """`window`: one of Storm's keys (checked by the caller)."""
    components: dict[str, dict[str, Any]] = {}
    kinds: dict[str, str] = {}
    for e in info.executors or []:
        stats = e.stats
        name = e.component_id
        if stats is None or (is_system(name) and not include_sys):
            continue
        c = components.setdefault(name, {"emitted": {}, "transferred": {}})
        for key in ("emitted", "transferred"):
            counts = (getattr(stats, key) or {}).get(window) or {}
            _add(c[key], {s: n for s, n in counts.items() if include_sys or not is_system(s)})
        if stats.specific.spout is not None:
            kinds[name] = "spout"
            _spout(c, stats.specific.spout, window)
        elif stats.specific.bolt is not None:
            kinds[name] = "bolt"
            _bolt(c, stats.specific.bolt, window)
    out: dict[str, Any] = {"window": window, "windowHint": WINDOWS[window]}
    for kind in ("spout", "bolt"):
        out[kind + "s"] = [
            _component(name, components[name], kind)
            for name in sorted(n for n, k in kinds.items() if k == kind)
        ]
    return out


def _spout(c: dict[str, Any], spout: Any, window: str) -> None:
    acked = (spout.acked or {}).get(window) or {}
    _add(c.setdefault("acked", {}), acked)
    _add(c.setdefault("failed", {}), (spout.failed or {}).get(window))
    _weigh(c.setdefault("complete", {}), (spout.complete_ms_avg or {}).get(window) or {}, acked)


def _bolt(c: dict[str, Any], bolt: Any, window: str) -> None:
    def by_input(field: Any) -> dict[tuple[str, str], Any]:
        return {_input(k): v for k, v in ((field or {}).get(window) or {}).items()}

    executed = by_input(bolt.executed)
    _add(c.setdefault("acked", {}), by_input(bolt.acked))
    _add(c.setdefault("failed", {}), by_input(bolt.failed))
    _add(c.setdefault("executed", {}), executed)
    _weigh(c.setdefault("process", {}), by_input(bolt.process_ms_avg), executed)
    _weigh(c.setdefault("execute", {}), by_input(bolt.execute_ms_avg), executed)


def _component(name: str, c: Mapping[str, Any], kind: str) -> dict[str, Any]:
    out: dict[str, Any] = {
        "id": name,
        "emitted": _rows(c["emitted"], False),
        "transferred": _rows(c["transferred"], False),
    }
    if kind == "spout":
        return {
            **out,
            "acked": _rows(c.get("acked", {}), False),
            "failed": _rows(c.get("failed", {}), False),
            "complete_ms_avg": _rows(_averages(c.get("complete", {})), False),
        }
    return {
        **out,
        "acked": _rows(c.get("acked", {}), True),
        "failed": _rows(c.get("failed", {}), True),
        "process_ms_avg": _rows(_averages(c.get("process", {})), True),
        "executed": _rows(c.get("executed", {}), True),
        "executed_ms_avg": _rows(_averages(c.get("execute", {})), True),
    }
