"""Storm UI REST API v1 /topology/:id/visualization: per component its type, figures and
input edges (component, stream, grouping), from the user topology and its page info; the
web page draws its graph from this."""

from __future__ import annotations

from typing import Any
from urllib.parse import quote

from .topology_json import bolt_json, spout_json


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
