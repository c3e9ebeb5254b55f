"""Worker memory: what each worker's processes hold resident, and which are over their limit.

A worker is its Python process plus what it starts (PySpark's JVM, Spark's Python workers),
all in the session the supervisor opened for it. An address-space rlimit cannot bound that:
the JVM reserves gigabytes of address space it never touches and fails to start under one,
and an rlimit binds each process alone. So the supervisor sums the resident memory of every
process in the worker's session each time its loop runs and ends the whole session once the
sum passes `topology.worker.max.memory.mb` (capped by `supervisor.worker.max.memory.mb`, so
a topology cannot lift itself past what the host allows). Where the worker has a cgroup
(cgroups.py), the sum is over the processes in it instead, so a child that left the session
counts too, and the kernel holds the cgroup under the limit plus a margin between two looks.
"""

from __future__ import annotations

import os
from collections.abc import Iterable, Mapping
from pathlib import Path

from .sync import WorkerKey

_PAGE = os.sysconf("SC_PAGE_SIZE")
MB = 1 << 20


def parse_stat(text: str) -> tuple[int, int]:
    """(session id, resident bytes) from a /proc/[pid]/stat line. The command name, in
    parentheses, may hold spaces or parentheses itself: fields are counted after the last ')'."""
    fields = text.rpartition(")")[2].split()
    return int(fields[3]), int(fields[21]) * _PAGE


def resident_by_session(proc: Path = Path("/proc")) -> dict[int, int]:
    """Resident bytes of all processes, summed per session id."""
    out: dict[int, int] = {}
    for entry in proc.iterdir():
        if not entry.name.isdigit():
            continue
        try:
            session, rss = parse_stat((entry / "stat").read_text())
        except (OSError, ValueError, IndexError):
            continue  # exited while we looked
        out[session] = out.get(session, 0) + rss
    return out


def resident_of(pids: Iterable[int], proc: Path = Path("/proc")) -> int:
    """Resident bytes of these processes together (one that exited meanwhile counts 0)."""
    total = 0
    for pid in pids:
        try:
            total += parse_stat((proc / str(pid) / "stat").read_text())[1]
        except (OSError, ValueError, IndexError):
            continue
    return total


def limit_mb(topology_mb: int, supervisor_mb: int) -> int:
    """The limit a worker runs under: its topology's, never above the supervisor's."""
    return min(topology_mb, supervisor_mb)


def over_limit(
    resident: Mapping[WorkerKey, int], limits_mb: Mapping[WorkerKey, int]
) -> list[WorkerKey]:
    """Workers whose resident bytes passed their limit."""
    return sorted(k for k, used in resident.items() if k in limits_mb and used > limits_mb[k] * MB)


def memory_error(limit: int, used_bytes: int) -> str:
    return (
        f"worker exceeded its memory limit of {limit} MB ({used_bytes // MB} MB resident); "
        "it was stopped (topology.worker.max.memory.mb)"
    )


def cgroup_memory_error(limit: int, cgroup_bytes: int) -> str:
    """As memory_error says it, for a worker the kernel OOM-killed in (its cgroup's cap)."""
    return (
        f"worker exceeded its memory limit of {limit} MB ({cgroup_bytes // MB} MB in its "
        "cgroup, the limit plus storm.cgroup.memory.limit.tolerance.margin.mb: the kernel "
        "killed a process in it); it was stopped (topology.worker.max.memory.mb)"
    )
