"""Storm UI REST API v1 bodies for the cluster-wide reads (/cluster/*, /nimbus/summary,
/supervisor/summary, /topology/summary), as pure functions of nimbus's Thrift answers.

Field names and types are Storm's (docs/STORM-UI-REST-API.md). Capacities are what the
supervisors registered (supervisor.memory.capacity.mb, supervisor.cpu.capacity), used
resources what their tasks declared (the resource-aware scheduler's figures; 0 for
topologies that declare none), as Storm's UIHelpers reads SupervisorSummary.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from squall import thrift_api as T
from squall.java_text import java_double
from squall.staleness import stale_json

from .log_files import LogLinks

MEMORY_KEY, CPU_KEY = "supervisor.memory.capacity.mb", "supervisor.cpu.capacity"
# Storm's normalized names, which its UIHelpers reads first
COMMON_MEMORY, COMMON_CPU = "memory.mb", "cpu.pcore.percent"
# what a supervisor's total_resources holds beside its generic resources: Storm's memory and
# CPU names (nimbus/scheduling/generic_resources.py's NOT_GENERIC: the UI imports no daemon
# module, tests/unit/test_layers.py) and the capacities' own keys
NOT_GENERIC = frozenset(
    {MEMORY_KEY, CPU_KEY, COMMON_MEMORY, COMMON_CPU, "onheap.memory.mb", "offheap.memory.mb"}
)


def capacity(s: Any) -> tuple[float, float]:
    """A SupervisorSummary's (total MB, total CPU %); 0.0 for what it does not say."""
    total = s.total_resources or {}
    mem = total.get(COMMON_MEMORY, total.get(MEMORY_KEY, 0.0))
    cpu = total.get(COMMON_CPU, total.get(CPU_KEY, 0.0))
    return float(mem or 0.0), float(cpu or 0.0)


def used(s: Any) -> tuple[float, float]:
    return float(s.used_mem or 0.0), float(s.used_cpu or 0.0)


def generic(resources: dict[str, float] | None) -> dict[str, float]:
    """The generic resources of a resource map (its memory and CPU left out)."""
    return {k: float(v) for k, v in (resources or {}).items() if k not in NOT_GENERIC}


def summed(maps: Iterable[dict[str, float]]) -> dict[str, float]:
    """The maps' amounts summed per name (Storm's NormalizedResourceRequest.addResourceMap)."""
    out: dict[str, float] = {}
    for resources in maps:
        for name, amount in resources.items():
            out[name] = out.get(name, 0.0) + amount
    return out


def left(total: dict[str, float], used: dict[str, float]) -> dict[str, float]:
    """What `used` leaves of `total`, per name (subtractResourceMap)."""
    return summed([total, {name: -amount for name, amount in used.items()}])


def topology_resources_json(t: Any) -> dict[str, Any]:
    """Storm's requested and assigned resources of a TopologySummary or TopologyPageInfo
    (what its tasks declared, nimbus/reads/topology_resources.py; 0 from a nimbus that does
    not say)."""
    out: dict[str, Any] = {}
    for which in ("requested", "assigned"):
        on_heap = float(getattr(t, f"{which}_memonheap", None) or 0.0)
        off_heap = float(getattr(t, f"{which}_memoffheap", None) or 0.0)
        out[f"{which}MemOnHeap"] = on_heap
        out[f"{which}MemOffHeap"] = off_heap
        out[f"{which}TotalMem"] = on_heap + off_heap
        out[f"{which}Cpu"] = float(getattr(t, f"{which}_cpu", None) or 0.0)
        out[f"{which}GenericResources"] = pretty_generic(
            generic(getattr(t, f"{which}_generic_resources", None))
        )
    return out


def pretty_generic(resources: dict[str, float]) -> str:
    """Storm's UIHelpers.prettifyGenericResources: "fpga=1.0 gpu.count=2.0", sorted by name
    ("" for none)."""
    return " ".join(f"{name}={java_double(resources[name])}" for name in sorted(resources))


def _percent(part: float, whole: float) -> float:
    return 100.0 * part / whole if whole > 0 else 0.0


def cluster_resources(supervisors: Iterable[Any]) -> dict[str, Any]:
    """Storm's cluster-wide totals, available and assigned percentages, and generic resources
    (totals, and what tasks do not hold)."""
    supervisors = list(supervisors)
    total_mem = sum(capacity(s)[0] for s in supervisors)
    total_cpu = sum(capacity(s)[1] for s in supervisors)
    used_mem = sum(used(s)[0] for s in supervisors)
    used_cpu = sum(used(s)[1] for s in supervisors)
    total_generic = summed(generic(s.total_resources) for s in supervisors)
    used_generic = summed(generic(s.used_generic_resources) for s in supervisors)
    return {
        "totalMem": total_mem,
        "totalCpu": total_cpu,
        "availMem": total_mem - used_mem,
        "availCpu": total_cpu - used_cpu,
        "memAssignedPercentUtil": _percent(used_mem, total_mem),
        "cpuAssignedPercentUtil": _percent(used_cpu, total_cpu),
        # what is left on supervisors too small for one more task (0 from an older nimbus)
        "fragmentedMem": sum(float(s.fragmented_mem or 0.0) for s in supervisors),
        "fragmentedCpu": sum(float(s.fragmented_cpu or 0.0) for s in supervisors),
        "totalGenerics": pretty_generic(total_generic),
        "availGenerics": pretty_generic(left(total_generic, used_generic)),
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
        **cluster_resources(cluster.supervisors),
        **stale_json(cluster),  # squall: nimbus answered from what it last read, and why
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
    (total_mem, total_cpu), (used_mem, used_cpu) = capacity(s), used(s)
    total_generic, used_generic = generic(s.total_resources), generic(s.used_generic_resources)
    return {
        "id": s.supervisor_id,
        "host": s.host,
        "uptime": pretty_uptime(s.uptime_secs),
        "uptimeSeconds": s.uptime_secs,
        "slotsTotal": s.num_workers,
        "slotsUsed": s.num_used_workers,
        "slotsFree": max(0, s.num_workers - s.num_used_workers),
        "version": s.version,
        "totalMem": total_mem,
        "totalCpu": total_cpu,
        "usedMem": used_mem,
        "usedCpu": used_cpu,
        "availMem": total_mem - used_mem,
        "availCpu": total_cpu - used_cpu,
        "totalGenericResources": pretty_generic(total_generic),
        "usedGenericResources": pretty_generic(used_generic),
        "availGenericResources": pretty_generic(left(total_generic, used_generic)),
        "logLink": "",
        # Storm's field; squall adds why (nimbus/scheduling/blacklist.py)
        "blacklisted": bool(getattr(s, "blacklisted", False)),
        "blacklistReason": getattr(s, "blacklist_reason", None) or "",
        # squall: its warm Spark Connect server ("off", "starting", "ready", "failed: ...")
        "sparkConnect": getattr(s, "spark_connect", None) or "unknown",
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
        "owner": getattr(t, "owner", None) or "",
        "name": t.name,
        "schedulerInfo": getattr(t, "sched_status", None) or "",
        "status": t.status,
        "uptime": pretty_uptime(t.uptime_secs),
        "uptimeSeconds": t.uptime_secs,
        "tasksTotal": t.num_tasks,
        "workersTotal": t.num_workers,
        "executorsTotal": t.num_executors,
        "replicationCount": 1,
        **topology_resources_json(t),
        **stale_json(t),
    }


def topology_summary(topologies: Iterable[Any]) -> dict[str, Any]:
    return {
        "topologies": [topology_summary_json(t) for t in sorted(topologies, key=lambda t: t.name)],
        "schedulerDisplayResource": False,
    }


def worker_json(w: Any, links: LogLinks | None = None) -> dict[str, Any]:
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
        "workerLogLink": links.worker(w.host, w.port, w.topology_id) if links else "",
    }


def supervisor_page(page: Any, links: LogLinks | None = None) -> dict[str, Any]:
    """/supervisor?id= or ?host=: the supervisors and their workers (Storm's
    getSupervisorPageInfo)."""
    return {
        "supervisors": [supervisor_json(s) for s in page.supervisor_summaries or []],
        "workers": [worker_json(w, links) for w in page.worker_summaries or []],
        "schedulerDisplayResource": False,
        **stale_json(page),  # squall: nimbus answered from what it last read, and why
    }


def history_summary(history: Any) -> dict[str, Any]:
    """/history/summary: the caller's topology ids, as Storm's "topo-history"."""
    return {"topo-history": list(history.topo_ids or [])}


def _or_na(value: float | None) -> Any:
    """Storm shows a guarantee nobody set as "N/A"."""
    return "N/A" if value is None else value


def owner_json(o: Any) -> dict[str, Any]:
    """One OwnerResourceSummary with Storm's names (UIHelpers.unpackOwnerResourceSummary)."""
    return {
        "owner": o.owner,
        "totalTopologies": o.total_topologies or 0,
        "totalExecutors": o.total_executors or 0,
        "totalWorkers": o.total_workers or 0,
        "totalTasks": o.total_tasks or 0,
        "totalMemoryUsage": o.memory_usage or 0.0,
        "totalCpuUsage": o.cpu_usage or 0.0,
        "memoryGuarantee": _or_na(o.memory_guarantee),
        "cpuGuarantee": _or_na(o.cpu_guarantee),
        "isolatedNodes": -1 if o.isolated_node_guarantee is None else o.isolated_node_guarantee,
        "memoryGuaranteeRemaining": _or_na(o.memory_guarantee_remaining),
        "cpuGuaranteeRemaining": _or_na(o.cpu_guarantee_remaining),
        "totalReqOnHeapMem": o.requested_on_heap_memory or 0.0,
        "totalReqOffHeapMem": o.requested_off_heap_memory or 0.0,
        "totalReqMem": o.requested_total_memory or 0.0,
        "totalReqCpu": o.requested_cpu or 0.0,
        "totalAssignedOnHeapMem": o.assigned_on_heap_memory or 0.0,
        "totalAssignedOffHeapMem": o.assigned_off_heap_memory or 0.0,
    }


def owner_resources(owners: Iterable[Any]) -> dict[str, Any]:
    """/owner-resources: every owner's totals."""
    return {
        "owners": [owner_json(o) for o in sorted(owners, key=lambda o: o.owner)],
        "schedulerDisplayResource": False,
    }


def owner_resource(owner: str, owners: list[Any], topologies: Iterable[Any]) -> dict[str, Any]:
    """/owner-resources/:owner: its totals and its topologies (an owner without any gets
    Storm's empty summary)."""
    if not owners:
        return owner_json(T.OwnerResourceSummary(owner=owner))
    return {
        **owner_json(owners[0]),
        "schedulerDisplayResource": False,
        "topologies": [
            topology_summary_json(t)
            for t in sorted(topologies, key=lambda t: t.name)
            if (getattr(t, "owner", None) or "") == owner  # TopologySummary.owner: Storm 2
        ],
    }


def topology_workers(executors: Iterable[Any], logviewer_port: int | None) -> dict[str, Any]:
    """/topology-workers/:id: the distinct host and port of its executors."""
    slots = sorted({(e.host, e.port) for e in executors if e.host})
    return {
        "hostPortList": [{"host": h, "port": p} for h, p in slots],
        "logviewerPort": logviewer_port,
    }
