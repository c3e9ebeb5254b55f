"""Node health checks, as Storm's HealthChecker runs them: each executable file in
storm.health.check.dir is run; one that exits non-zero fails the node (Storm reads an output
beginning "ERROR" as failed and any other non-zero exit as failed with its exit code: both
fail), and one still running after storm.health.check.timeout.ms is killed and fails it too
unless storm.health.check.fail.on.timeouts is false. A supervisor whose node fails stops its
workers and exits (Storm's SupervisorHealthCheck), naming the scripts and what they printed:
its registration goes with it and nimbus moves its tasks to healthy hosts.

`verdict` is the pure judgement; `run_checks` runs the scripts; `HealthWatch` is the
supervisor's timer for it.
"""

from __future__ import annotations

import os
import subprocess
import threading
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

SUCCESS, FAILED, FAILED_WITH_EXIT_CODE, TIMEOUT = (
    "success",
    "failed",
    "failed_with_exit_code",
    "timeout",
)
OUTPUT_CHARS = 500  # of a failed script's output, in the verdict and the log


class NodeUnhealthy(Exception):
    """A supervisor stopped because its node failed its health checks."""


@dataclass(frozen=True)
class ScriptResult:
    script: str
    status: str  # SUCCESS, FAILED, FAILED_WITH_EXIT_CODE or TIMEOUT
    detail: str = ""  # exit code and output of a failed script; why it could not run


def verdict(results: Sequence[ScriptResult], fail_on_timeouts: bool) -> str | None:
    """None when the node is healthy, else why not (every script that failed it)."""
    failing = [r for r in results if r.status in (FAILED, FAILED_WITH_EXIT_CODE)]
    if fail_on_timeouts:
        failing += [r for r in results if r.status == TIMEOUT]
    if not failing:
        return None
    return "; ".join(
        f"{r.script}: {r.status}{f' ({r.detail})' if r.detail else ''}" for r in failing
    )


def check_dir(conf: Mapping[str, Any]) -> Path:
    """storm.health.check.dir, a relative one under storm.local.dir (Storm's: under its
    STORM_HOME, which squall has not)."""
    path = Path(conf["storm.health.check.dir"])
    return path if path.is_absolute() else Path(conf["storm.local.dir"]) / path


def scripts(directory: Path) -> list[Path]:
    """The executable files of `directory`, by name (none when it does not exist)."""
    if not directory.is_dir():
        return []
    return sorted(p for p in directory.iterdir() if p.is_file() and os.access(p, os.X_OK))


def run_script(script: Path, timeout: float) -> ScriptResult:
    try:
        done = subprocess.run(
            [str(script)],
            stdin=subprocess.DEVNULL,
            capture_output=True,
            timeout=timeout,
            check=False,
        )
    except subprocess.TimeoutExpired:  # run() killed it
        return ScriptResult(str(script), TIMEOUT, f"still running after {timeout:g} s")
    except OSError as exc:  # not runnable after all (a bad #! line, ...)
        return ScriptResult(str(script), FAILED, f"cannot run: {exc}")
    if done.returncode == 0:
        return ScriptResult(str(script), SUCCESS)
    out = done.stdout.decode(errors="replace").strip()
    err = done.stderr.decode(errors="replace").strip()
    status = FAILED if out.startswith("ERROR") else FAILED_WITH_EXIT_CODE
    said = " / ".join(text for text in (out, err) if text)[:OUTPUT_CHARS]
    return ScriptResult(str(script), status, f"exit {done.returncode}{f': {said}' if said else ''}")


def run_checks(conf: Mapping[str, Any]) -> list[ScriptResult]:
    timeout = conf["storm.health.check.timeout.ms"] / 1000
    return [run_script(script, timeout) for script in scripts(check_dir(conf))]


class HealthWatch(threading.Thread):
    """Runs the checks at start and then every supervisor.health.check.interval.secs (Storm's
    timer waits an interval first: a supervisor started again on a failing node would run
    workers until then), off the supervisor's sync loop: a slow script delays no sync.
    `on_failed(why)` is called once, when the node fails."""

    def __init__(
        self,
        conf: Mapping[str, Any],
        stopping: threading.Event,
        on_failed: Callable[[str], None],
    ) -> None:
        super().__init__(name="health-check", daemon=True)
        self.conf, self.stopping, self.on_failed = conf, stopping, on_failed

    def run(self) -> None:
        interval = self.conf["supervisor.health.check.interval.secs"]
        fail_on_timeouts = bool(self.conf["storm.health.check.fail.on.timeouts"])
        wait = 0.0
        while not self.stopping.wait(wait):
            why = verdict(run_checks(self.conf), fail_on_timeouts)
            if why is not None and not self.stopping.is_set():
                self.on_failed(why)
                return
            wait = interval
