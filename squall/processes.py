"""Starting and ending squall's processes: the environment of a daemon or worker started
with `python -m`, and ending processes by PID, politely first. Shared by the supervisor
(its workers), the local cluster and the ZooKeeper fixture."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
from pathlib import Path

# A worker's exit codes that its supervisor reads (supervisor/daemon.py)
WORKER_UNHEALTHY = 3  # a task stalled or failed for good: a failure, restarted with back-off
# What it ran was taken from it (its tasks changed, or its topology or assignment went): its
# own watch fired before its supervisor's sync. Not a failure (supervisor/sync.py).
WORKER_REASSIGNED = 4
# Restarted on request (Storm's JVM_RESTART profiler action): started again at once, and
# neither a failure nor an error of the topology.
WORKER_RESTART_ASKED = 5
# Its supervisor died: nobody reads this one, but it says why in the log (worker/main.py).
WORKER_ORPHANED = 6
# A supervisor's own exit when its node failed its health checks (supervisor/health_check.py):
# its systemd unit does not restart it (RestartPreventExitStatus)
SUPERVISOR_UNHEALTHY = 7


def python_module(module: str) -> list[str]:
    """The command that runs `module` with this Python. With -P (Python 3.11+) the directory
    the process starts in stays off its sys.path, so a daemon or worker imports squall from
    its installation (compiled or not: squall/hot_path.py), never from a
    squall/ directory that happens to be where it starts: a checkout's, or a stranger's. A
    flag, not PYTHONSAFEPATH: the process's own children (a multilang script importing the
    module beside it) keep Python's usual path."""
    return [sys.executable, *(["-P"] if sys.version_info >= (3, 11) else []), "-m", module]


def terminate(process: subprocess.Popen, grace: float) -> None:
    """SIGTERM, then SIGKILL if it has not exited within `grace` seconds."""
    if process.poll() is None:
        process.terminate()
        try:
            process.wait(grace)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait()


def kill_pid_file(pid_file: Path) -> None:
    """SIGKILL the worker named by a PID file, if that PID still is a squall worker (a PID
    reused by an unrelated process is left alone)."""
    try:
        pid = int(pid_file.read_text().strip())
        cmdline = Path(f"/proc/{pid}/cmdline").read_bytes()
        if b"squall.worker" in cmdline:
            os.kill(pid, signal.SIGKILL)
    except (ValueError, OSError):
        pass
    pid_file.unlink(missing_ok=True)
