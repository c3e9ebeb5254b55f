"""Workers in cgroups: what each worker's cgroup is limited to, and the files that say so.

A worker's session (memory.py) bounds what the supervisor measures and kills, but a child
that calls setsid() leaves the session: its memory went uncounted and it outlived `squall
kill`. A cgroup holds every process forked inside it, whatever it does with sessions, so
each worker gets one (Storm's CgroupManager): the kernel bounds its memory, its CPU is
capped, and stopping the worker kills everything in it. This module is the pure part: the
limits from the confs, and the values written for cgroup v2 (one unified hierarchy) or v1
(one hierarchy per controller). cgroup_fs.py writes them.
"""

from __future__ import annotations

import hashlib
import math
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

# Storm's keys (DaemonConfig); squall's defaults differ where noted in conf/defaults.yaml
ENABLE = "storm.resource.isolation.plugin.enable"  # null: on where the host allows it
ROOT = "storm.supervisor.cgroup.rootdir"
MARGIN = "storm.cgroup.memory.limit.tolerance.margin.mb"
ENFORCE = "storm.cgroup.memory.enforcement.enable"
MEMORY_OVERRIDE = "storm.worker.cgroup.memory.mb.limit"
CPU_OVERRIDE = "storm.worker.cgroup.cpu.limit"
TASK_CPU = "topology.component.cpu.pcore.percent"

MB = 1 << 20
PERIOD_US = 100_000  # cpu.max's period, Storm's cfs_period_us
MIN_QUOTA_US = 1000  # the kernel refuses a quota under 1 ms


class CgroupConfigError(ValueError):
    """A cgroup setting that cannot be a limit (a negative margin, a zero CPU cap)."""


@dataclass(frozen=True)
class Limits:
    """One worker's cgroup limits: None is no limit."""

    memory_bytes: int | None
    cpu_percent: float | None  # 100 = one core


def _number(conf: Mapping[str, Any], key: str, positive: bool) -> float | None:
    value = conf.get(key)
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not math.isfinite(value):
        raise CgroupConfigError(f"{key} must be a number, got {value!r:.40}")
    if value < 0 or (positive and value == 0):
        bound = "above 0" if positive else "at least 0"
        raise CgroupConfigError(f"{key} must be {bound}, got {value}")
    return float(value)


def worker_limits(
    supervisor_conf: Mapping[str, Any],
    worker_conf: Mapping[str, Any],
    memory_limit_mb: int,
    tasks: int,
) -> Limits:
    """Memory: the worker's memory limit (topology.worker.max.memory.mb, capped by the
    supervisor) plus the tolerance margin, so the supervisor's own check, which names the
    limit in the topology's errors, usually acts first and the kernel only stops what grows
    faster than it looks; Storm's storm.worker.cgroup.memory.mb.limit replaces the limit.
    CPU: storm.worker.cgroup.cpu.limit (the supervisor's) if set, else the CPU the topology
    declares per task (topology.component.cpu.pcore.percent) times the worker's tasks, else
    none. The supervisor's settings are the host's: a topology cannot lift them."""
    memory: int | None = None
    if supervisor_conf.get(ENFORCE, True):
        margin = _number(supervisor_conf, MARGIN, positive=False) or 0.0
        base = _number(supervisor_conf, MEMORY_OVERRIDE, positive=True) or memory_limit_mb
        memory = math.ceil((base + margin) * MB)
    cpu = _number(supervisor_conf, CPU_OVERRIDE, positive=True)
    if cpu is None:
        per_task = _number(worker_conf, TASK_CPU, positive=False)
        cpu = per_task * tasks if per_task else None
    return Limits(memory, cpu)


def cpu_quota_us(percent: float | None) -> int | None:
    """Microseconds of CPU per PERIOD_US the worker may use (None: no cap)."""
    if percent is None:
        return None
    return max(MIN_QUOTA_US, round(percent / 100 * PERIOD_US))


def v2_files(limits: Limits) -> list[tuple[str, str]]:
    """(file, value) in a v2 worker cgroup, in order. memory.oom.group: the kernel's OOM kill
    takes the whole worker, as the supervisor's memory stop does, never one child only."""
    out = []
    if limits.memory_bytes is not None:
        out += [("memory.max", str(limits.memory_bytes)), ("memory.swap.max", "0")]
        out.append(("memory.oom.group", "1"))
    quota = cpu_quota_us(limits.cpu_percent)
    out.append(("cpu.max", f"{'max' if quota is None else quota} {PERIOD_US}"))
    return out


def v1_files(limits: Limits) -> dict[str, list[tuple[str, str]]]:
    """controller -> (file, value) in a v1 worker cgroup, in order (memsw after the memory
    limit: the kernel refuses a memory+swap limit under the memory limit)."""
    out: dict[str, list[tuple[str, str]]] = {"memory": [], "freezer": []}
    if limits.memory_bytes is not None:
        value = str(limits.memory_bytes)
        out["memory"] = [("memory.limit_in_bytes", value), ("memory.memsw.limit_in_bytes", value)]
    quota = cpu_quota_us(limits.cpu_percent)
    if quota is not None:
        out["cpu"] = [("cpu.cfs_period_us", str(PERIOD_US)), ("cpu.cfs_quota_us", str(quota))]
    return out


def supervisor_name(supervisor_id: str, local_dir: str) -> str:
    """The supervisor's directory name: its id and its local dir's, so that two supervisors
    with one id (every `squall local` cluster has a supervisor1) never end each other's
    workers as leftovers, while the same supervisor started again finds its own."""
    digest = hashlib.sha256(local_dir.encode()).hexdigest()[:12]
    return f"{supervisor_id}-{digest}"


def supervisor_path(own: str, rootdir: str, supervisor_id: str) -> str:
    """Where a supervisor's worker cgroups live, relative to the hierarchy's mount: under the
    supervisor's own cgroup (a supervisor run by systemd or in a container keeps its
    workers inside its own limits) unless storm.supervisor.cgroup.rootdir is absolute."""
    if not rootdir or ".." in rootdir.split("/"):
        raise CgroupConfigError(f"{ROOT} must be a path without '..', got {rootdir!r:.80}")
    base = rootdir if rootdir.startswith("/") else f"{own.rstrip('/')}/{rootdir}"
    return f"{base.strip('/')}/{supervisor_id}"


def oom_kills(events: str) -> int:
    """The 'oom_kill N' count of v2's memory.events or v1's memory.oom_control (0 if none)."""
    for line in events.splitlines():
        name, _, value = line.partition(" ")
        if name == "oom_kill" and value.strip().isdigit():
            return int(value)
    return 0


def wanted(enable: Any) -> bool | None:
    """storm.resource.isolation.plugin.enable: True (must), False (never), None (where the
    host allows it)."""
    if enable is None or isinstance(enable, bool):
        return enable
    raise CgroupConfigError(f"{ENABLE} must be true, false or null, got {enable!r:.40}")


def unavailable_warning(reason: str) -> str:
    """The one line a supervisor logs at start when its workers run without cgroups."""
    return (
        f"cgroups unavailable ({reason}): workers run without them, so a worker's memory is "
        "bounded only by the supervisor's polling of its session's resident memory, and a "
        "child that leaves the worker's session (setsid, double fork) escapes that limit and "
        f"outlives the worker's stop; run the supervisor as root on a host with a writable "
        f"cgroup hierarchy with the memory controller, or set {ENABLE}: false to run "
        "without cgroups and silence this"
    )
