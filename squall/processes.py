"""Ending processes by PID, politely first: shared by the supervisor (its workers), the
local cluster and the ZooKeeper fixture."""

from __future__ import annotations

import os
import signal
import subprocess
from pathlib import Path


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
