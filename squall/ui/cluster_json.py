"""Storm UI REST API v1 bodies for the cluster-wide reads (/cluster/*, /nimbus/summary,
/supervisor/summary, /topology/summary), as pure functions of nimbus's Thrift answers.

Field names and types are Storm's (docs/STORM-UI-REST-API.md). squall's scheduler does not
account memory and CPU, so schedulerDisplayResource is false and the resource fields are
Storm's zeros for "not displayed", as Storm answers when its scheduler has no resources.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

NO_RESOURCES = {
    "totalMem": 0.0,
    "totalCpu": 0.0,
    "availMem": 0.0,
    "availCpu": 0.0,
    "memAssignedPercentUtil": 0.0,
    "cpuAssignedPercentUtil": 0.0,
}


def pretty_uptime(secs: int) -> str:
    """Storm's UIHelpers.prettyUptimeSec: "6m 5s", "1d 0h 0m 0s"."""
    secs = max(0, int(secs))
    days, rest = divmod(secs, 86400)
    hours, rest = divmod(rest, 3600)
    minutes, seconds = divmod(rest, 60)
    parts = [(days, "d"), (hours, "h"), (minutes, "m")]
    while parts and parts[0][0] == 0:
        parts.pop(0)
    return " ".join(f"{n}{unit}" for n, unit in [*parts, (seconds, "s")])


def storm_version(cluster: Any) -> str:
    leaders = [n for n in cluster.nimbuses if n.isLeader] or list(cluster.nimbuses)
    return leaders[0].version if leaders else ""


def cluster_summary(cluster: Any) -> dict[str, Any]:
    slots_total = sum(s.num_workers for s in cluster.supervisors)
    slots_used = sum(s.num_used_workers for s in cluster.supervisors)
    return {
        "stormVersion": storm_version(cluster),
        "supervisors": len(cluster.supervisors),
        "topologies": len(cluster.topologies),
        "slotsTotal": slots_total,
        "slotsUsed": slots_used,
        "slotsFree": max(0, slots_total - slots_used),
        "executorsTotal": sum(t.num_executors for t in cluster.topologies),
        "tasksTotal": sum(t.num_tasks for t in cluster.topologies),
        "schedulerDisplayResource": False,
        **NO_RESOURCES,
    }


def nimbus_summary(nimbuses: Iterable[Any]) -> dict[str, Any]:
    """Storm's status strings: "Leader" or "Not a Leader" (a dead nimbus is not listed)."""
    return {
        "nimbuses": [
            {
                "host": n.host,
                "port": n.port,
                "status": "Leader" if n.isLeader else "Not a Leader",
                "version": n.version,
                "nimbusUpTime": pretty_uptime(n.uptime_secs),
                "nimbusUpTimeSeconds": str(n.uptime_secs),
                "nimbusLogLink": "",
            }
            for n in sorted(nimbuses, key=lambda n: (not n.isLeader, n.host, n.port))
        ]
    }


def supervisor_json(s: Any) -> dict[str, Any]:
    return {
        "id": s.supervisor_id,
        "host": s.host,
        "uptime": pretty_uptime(s.uptime_secs),
        "uptimeSeconds": s.uptime_secs,
        "slotsTotal": s.num_workers,
        "slotsUsed": s.num_used_workers,
        "slotsFree": max(0, s.num_workers - s.num_used_workers),
        "version": s.version,
        "totalMem": 0.0,
        "totalCpu": 0.0,
        "usedMem": 0.0,
        "usedCpu": 0.0,
    }


def supervisor_summary(supervisors: Iterable[Any]) -> dict[str, Any]:
    return {
        "supervisors": [supervisor_json(s) for s in sorted(supervisors, key=lambda s: s.host)],
        "schedulerDisplayResource": False,
    }


def topology_summary_json(t: Any) -> dict[str, Any]:
    return {
        "id": t.id,
        "encodedId": t.id,
        "name": t.name,
        "status": t.status,
        "uptime": pretty_uptime(t.uptime_secs),
        "uptimeSeconds": t.uptime_secs,
        "tasksTotal": t.num_tasks,
        "workersTotal": t.num_workers,
        "executorsTotal": t.num_executors,
        "replicationCount": 1,
        "requestedMemOnHeap": 0.0,
        "requestedMemOffHeap": 0.0,
        "requestedTotalMem": 0.0,
        "requestedCpu": 0.0,
        "assignedMemOnHeap": 0.0,
        "assignedMemOffHeap": 0.0,
        "assignedTotalMem": 0.0,
        "assignedCpu": 0.0,
    }


def topology_summary(topologies: Iterable[Any]) -> dict[str, Any]:
    return {
        "topologies": [topology_summary_json(t) for t in sorted(topologies, key=lambda t: t.name)],
        "schedulerDisplayResource": False,
    }


def worker_json(w: Any) -> dict[str, Any]:
    """A WorkerSummary as Storm's workers[] entries."""
    return {
        "supervisorId": w.supervisor_id,
        "host": w.host,
        "port": w.port,
        "topologyId": w.topology_id,
        "topologyName": w.topology_name,
        "executorsTotal": w.num_executors or 0,
        "assignedMemOnHeap": 0.0,
        "assignedMemOffHeap": 0.0,
        "assignedCpu": 0.0,
        "componentNumTasks": dict(w.component_to_num_tasks or {}),
        "uptime": pretty_uptime(w.uptime_secs or 0),
        "uptimeSeconds": w.uptime_secs or 0,
        "workerLogLink": "",
    }
