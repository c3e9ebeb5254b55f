"""A worker whose supervisor died ends what it forked.

The supervisor kills everything in a worker's cgroup when it stops the worker. When the
supervisor itself is killed (kill -9), the worker notices and exits (WORKER_ORPHANED), but a
child it forked that left its session (setsid) would live on in the cgroup, uncounted by
anyone, until that supervisor starts again. So an orphaned worker kills the rest of its own
cgroup on its way out. Only a squall worker cgroup (worker-<topology>-<port>) is touched:
without cgroups a worker shares its supervisor's or a service's cgroup, whose other processes
are not its own.
"""

from __future__ import annotations

import contextlib
import logging
import os
import signal
from pathlib import Path, PurePosixPath

from squall.cgroup_names import WORKER_PREFIX, own_cgroups

log = logging.getLogger(__name__)


def worker_cgroup(proc_self_cgroup: str, mount: Path) -> Path | None:
    """The directory of this worker's own cgroup (v1's memory hierarchy, else v2's unified
    one), or None when it is not in a squall worker cgroup."""
    own = own_cgroups(proc_self_cgroup)
    v1 = "memory" in own
    path = own["memory"] if v1 else own.get("")
    if path is None or not PurePosixPath(path).name.startswith(WORKER_PREFIX):
        return None
    return (mount / "memory" if v1 else mount) / path.lstrip("/")


def end_the_rest(directory: Path, passes: int = 50) -> int:
    """SIGKILL every other process in the cgroup at `directory`, again for any that a dying
    one forked meanwhile; how many were killed."""
    killed: set[int] = set()
    for _ in range(passes):
        try:
            listed = {int(p) for p in (directory / "cgroup.procs").read_text().split()}
        except (OSError, ValueError):
            break
        pids = listed - killed - {os.getpid()}
        if not pids:
            break
        for pid in pids:
            with contextlib.suppress(ProcessLookupError, PermissionError):
                os.kill(pid, signal.SIGKILL)
        killed |= pids
    return len(killed)


def end_orphaned_children(mount: Path) -> None:
    """Called by an orphaned worker as it exits."""
    try:
        directory = worker_cgroup(Path("/proc/self/cgroup").read_text(), mount)
    except OSError:
        return
    if directory is not None:
        count = end_the_rest(directory)
        if count:
            log.warning("its supervisor is gone: killed %d process(es) it had forked", count)
