"""Node health checks, as Storm's HealthChecker runs them: each executable file in
storm.health.check.dir is run; one that exits non-zero fails the node (Storm reads an output
beginning "ERROR" as failed and any other non-zero exit as failed with its exit code: both
fail), and one still running after storm.health.check.timeout.ms is killed and fails it too
unless storm.health.check.fail.on.timeouts is false. A supervisor whose node fails stops its
workers and exits (Storm's SupervisorHealthCheck), naming the scripts and what they printed:
its registration goes with it and nimbus moves its tasks to healthy hosts.

`verdict` is the pure judgement; `run_checks` runs the scripts; a supervisor runs them once
before it registers (Storm's waits 30 s first, running workers meanwhile on a node that
fails) and `HealthWatch` every interval after.
"""

from __future__ import annotations

import contextlib
import logging
import os
import signal
import subprocess
import tempfile
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
DEFAULT_DIR = "healthchecks"  # Storm's storm.health.check.dir
log = logging.getLogger("squall.supervisor")


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
    return "; ".join(map(described, failing))


def described(result: ScriptResult) -> str:
    """One script's result as the log, the CLI and the supervisor's exit line say it."""
    return f"{result.script}: {result.status}" + (f" ({result.detail})" if result.detail else "")


def check_dir(conf: Mapping[str, Any]) -> Path:
    """storm.health.check.dir (null: Storm's default, healthchecks), a relative one under
    storm.local.dir (Storm's: under its STORM_HOME, which squall has not)."""
    path = Path(conf.get("storm.health.check.dir") or DEFAULT_DIR)
    return path if path.is_absolute() else Path(conf["storm.local.dir"]) / path


def scripts(directory: Path) -> list[Path]:
    """The executable files of `directory`, by name (none when it does not exist); OSError
    when it cannot be listed."""
    if not directory.is_dir():
        return []
    return sorted(p for p in directory.iterdir() if p.is_file() and os.access(p, os.X_OK))


def run_script(script: Path, timeout: float) -> ScriptResult:
    """Run one script, as Storm does: its exit judges it (not whether a child it left behind
    still holds its output), and past the timeout it is killed with its process group."""
    with tempfile.TemporaryFile() as out, tempfile.TemporaryFile() as err:
        try:
            process = subprocess.Popen(
                [str(script)],
                stdin=subprocess.DEVNULL,
                stdout=out,
                stderr=err,
                start_new_session=True,  # its children go with it on a timeout
            )
        except OSError as exc:  # not runnable after all (a bad #! line, ...)
            return ScriptResult(str(script), FAILED, f"cannot run: {exc}")
        try:
            code = process.wait(timeout)
        except subprocess.TimeoutExpired:
            with contextlib.suppress(ProcessLookupError, PermissionError):
                os.killpg(process.pid, signal.SIGKILL)
            process.wait()
            return ScriptResult(str(script), TIMEOUT, f"still running after {timeout:g} s")
        if code == 0:
            return ScriptResult(str(script), SUCCESS)
        said = [_read(f) for f in (out, err)]
    status = FAILED if said[0].startswith("ERROR") else FAILED_WITH_EXIT_CODE
    text = " / ".join(t for t in said if t)[:OUTPUT_CHARS]
    return ScriptResult(str(script), status, f"exit {code}{f': {text}' if text else ''}")


def _read(file: Any) -> str:
    file.seek(0)
    return file.read(OUTPUT_CHARS * 4).decode(errors="replace").strip()


def run_checks(conf: Mapping[str, Any]) -> list[ScriptResult]:
    """Every script's result; a directory that cannot be listed is a failed check (Storm's
    HealthChecker fails on it too)."""
    timeout = conf["storm.health.check.timeout.ms"] / 1000
    directory = check_dir(conf)
    try:
        found = scripts(directory)
    except OSError as exc:
        return [ScriptResult(str(directory), FAILED, f"cannot list it: {exc}")]
    return [run_script(script, timeout) for script in found]


def node_verdict(conf: Mapping[str, Any]) -> str | None:
    """Run the checks once: None when the node is healthy, else why not."""
    return verdict(run_checks(conf), bool(conf["storm.health.check.fail.on.timeouts"]))


class HealthWatch(threading.Thread):
    """Runs the checks every supervisor.health.check.interval.secs (the supervisor runs them
    once itself before it registers), off the supervisor's sync loop: a slow script delays
    no sync. `on_failed(why)` is called once, when the node fails; a check that raises
    counts as failed, and the thread never dies silently."""

    def __init__(
        self,
        conf: Mapping[str, Any],
        stopping: threading.Event,
        on_failed: Callable[[str], None],
    ) -> None:
        super().__init__(name="health-check", daemon=True)
        self.conf, self.stopping, self.on_failed = conf, stopping, on_failed

    def run(self) -> None:
        while not self.stopping.wait(self.conf["supervisor.health.check.interval.secs"]):
            try:
                why = node_verdict(self.conf)
            except Exception as exc:  # noqa: BLE001 - a check that cannot run fails the node
                log.exception("the node health checks could not run")
                why = f"the checks could not run: {type(exc).__name__}: {exc}"
            if why is not None and not self.stopping.is_set():
                self.on_failed(why)
                return
