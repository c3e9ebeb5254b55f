"""How squall names a worker's cgroup, and how a process reads its own: shared by the
supervisor, which makes the cgroups (supervisor/cgroups.py), and the worker, which ends what
it forked when its supervisor is gone (worker/orphan_cleanup.py)."""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import Any

HIERARCHY = "storm.cgroup.hierarchy.dir"  # Storm's key: where the cgroup filesystem is mounted

WORKER_PREFIX = "worker-"


def worker_group(topology_id: str, port: int) -> str:
    """A worker's cgroup, under its supervisor's."""
    return f"{WORKER_PREFIX}{topology_id}-{port}"


def hierarchy(conf: Mapping[str, Any]) -> Path:
    """The cgroup filesystem's mount (conf/defaults.yaml: /sys/fs/cgroup)."""
    return Path(conf.get(HIERARCHY) or "/sys/fs/cgroup")


def own_cgroups(proc_self_cgroup: str) -> dict[str, str]:
    """controller -> this process's cgroup path from /proc/self/cgroup ("" is v2's unified
    hierarchy; a v1 line may name several co-mounted controllers)."""
    out: dict[str, str] = {}
    for line in proc_self_cgroup.splitlines():
        parts = line.split(":", 2)
        if len(parts) != 3:
            continue
        for controller in parts[1].split(",") if parts[1] else [""]:
            out[controller] = parts[2]
    return out
