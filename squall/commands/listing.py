"""What `squall list` prints for a ClusterSummary, as pure functions: Storm's ListTopologies
table (its printf format and columns), the scheduler's word on each topology it could not
fully place, and squall's supervisors; or all of it as one JSON document.

Plain text, not a rich table: rich cuts cells to the terminal width, 80 columns when piped,
and an id cut so and pasted gives NotAliveException. Storm's %-20s pads and never cuts."""

from __future__ import annotations

import json
from typing import Any

from squall.staleness import stale_mark, stale_note

STORM_FORMAT = "%-20s %-10s %-10s %-12s %-12s %-20s %-20s"  # ListTopologies.MSG_FORMAT
STORM_COLUMNS = (
    "Topology_name",
    "Status",
    "Num_tasks",
    "Num_workers",
    "Uptime_secs",
    "Topology_Id",
    "Owner",
)
SUPERVISOR_FORMAT = "%-40s %-20s %-6s %-10s %-12s %-13s"
SUPERVISOR_COLUMNS = (
    "Supervisor_Id",
    "Host",
    "Slots",
    "Used_slots",
    "Uptime_secs",
    "Spark_connect",
)
RULE = "-" * 88  # Storm's separator line


def listing_lines(info: Any, now: float | None = None) -> list[str]:
    """`now`: the wall clock, for the age of a stale answer (first line: since when nimbus
    answers from what it last read, and why)."""
    topologies, supervisors = info.topologies or [], info.supervisors or []
    mark = stale_mark(info)
    lines = [] if mark is None else [stale_note(*mark, now)]
    if topologies:
        lines += [(STORM_FORMAT % STORM_COLUMNS).rstrip(), RULE]
        for t in topologies:
            row = (t.name, t.status, t.num_tasks, t.num_workers, t.uptime_secs, t.id, t.owner)
            lines.append((STORM_FORMAT % tuple("" if v is None else v for v in row)).rstrip())
    else:
        lines.append("No topologies running.")
    for t in topologies:
        if t.sched_status and t.sched_status != "Fully Scheduled":
            lines.append(f"{t.name} ({t.id}): {t.sched_status}")
    lines.append("")
    if supervisors:
        lines += [(SUPERVISOR_FORMAT % SUPERVISOR_COLUMNS).rstrip(), RULE]
        for s in supervisors:
            spark = spark_connect(s)
            fields = (s.supervisor_id, s.host, s.num_workers, s.num_used_workers, s.uptime_secs)
            lines.append((SUPERVISOR_FORMAT % (*fields, spark.split(":")[0])).rstrip())
        for s in supervisors:  # out of scheduling (nimbus/scheduling/blacklist.py): say why
            if getattr(s, "blacklisted", None):
                reason = getattr(s, "blacklist_reason", None) or "blacklisted"
                lines.append(f"{s.supervisor_id} ({s.host}): {reason}")
        for s in supervisors:  # the column says "failed": say why, as for the blacklist
            if spark_connect(s).startswith("failed:"):
                why = spark_connect(s).removeprefix("failed:").strip()
                lines.append(f"{s.supervisor_id} ({s.host}): Spark Connect server failed: {why}")
    else:
        lines.append("No supervisors running.")
    return lines


def listing_json(info: Any) -> str:
    """One JSON object: `topologies` and `supervisors`, keyed by the Thrift field names, and
    `stale_since` and `stale_cause` (null unless nimbus answered from what it last read)."""
    topology_keys = (
        "name",
        "id",
        "status",
        "num_tasks",
        "num_executors",
        "num_workers",
        "uptime_secs",
        "owner",
        "sched_status",
    )
    supervisor_keys = (
        "supervisor_id",
        "host",
        "num_workers",
        "num_used_workers",
        "uptime_secs",
        "version",
        "blacklisted",
        "blacklist_reason",
        "spark_connect",
    )
    return json.dumps(
        {
            "topologies": [_fields(t, topology_keys) for t in info.topologies or []],
            "supervisors": [_fields(s, supervisor_keys) for s in info.supervisors or []],
            **_fields(info, ("stale_since", "stale_cause")),
        },
        indent=2,
    )


def spark_connect(summary: Any) -> str:
    """Its warm Spark Connect server's state; "unknown" from a nimbus or supervisor too old
    to say."""
    return getattr(summary, "spark_connect", None) or "unknown"


def _fields(struct: Any, keys: tuple[str, ...]) -> dict[str, Any]:
    return {key: getattr(struct, key, None) for key in keys}
