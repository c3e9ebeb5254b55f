"""Node health checks as Storm's HealthChecker judges them: real scripts in a directory, run
with their timeout; the verdict, and `squall node-health-check`."""

import contextlib
import os
import signal
import stat
import threading
from pathlib import Path

from click.testing import CliRunner

from squall.cli import main
from squall.local import wait_for
from squall.supervisor.health_check import (
    FAILED,
    FAILED_WITH_EXIT_CODE,
    SUCCESS,
    TIMEOUT,
    HealthWatch,
    ScriptResult,
    check_dir,
    run_checks,
    scripts,
    verdict,
)


def script(directory, name, body, executable=True):
    directory.mkdir(exist_ok=True)
    path = directory / name
    path.write_text(f"#!/bin/sh\n{body}\n")
    if executable:
        path.chmod(path.stat().st_mode | stat.S_IXUSR)
    return path


def conf(directory, timeout_ms=5000, fail_on_timeouts=True):
    return {
        "storm.health.check.dir": str(directory),
        "storm.local.dir": "/nonexistent",
        "storm.health.check.timeout.ms": timeout_ms,
        "storm.health.check.fail.on.timeouts": fail_on_timeouts,
    }


def test_each_executable_script_runs_and_says_how_it_ended(tmp_path):
    checks = tmp_path / "checks"
    script(checks, "a-ok", "exit 0")
    script(checks, "b-error", "echo 'ERROR disk /data is full'; exit 1")
    script(checks, "c-code", "echo 'something else' >&2; exit 2")
    script(checks, "d-slow", "sleep 30")
    script(checks, "e-not-executable", "exit 1", executable=False)
    (checks / "f-directory").mkdir()
    results = run_checks(conf(checks, timeout_ms=300))
    assert [(os.path.basename(r.script), r.status) for r in results] == [
        ("a-ok", SUCCESS),
        ("b-error", FAILED),
        ("c-code", FAILED_WITH_EXIT_CODE),
        ("d-slow", TIMEOUT),
    ]
    assert results[1].detail == "exit 1: ERROR disk /data is full"
    assert results[2].detail == "exit 2: something else"


def test_a_node_fails_on_any_failed_script_and_on_timeouts_unless_told_not_to():
    ok, slow = ScriptResult("ok", SUCCESS), ScriptResult("slow", TIMEOUT, "still running")
    code = ScriptResult("code", FAILED_WITH_EXIT_CODE, "exit 2")
    assert verdict([ok], True) is None and verdict([], True) is None
    assert verdict([ok, code], False) == "code: failed_with_exit_code (exit 2)"
    assert verdict([ok, slow], True) == "slow: timeout (still running)"
    assert verdict([ok, slow], False) is None


def test_no_directory_no_checks_and_a_relative_one_is_under_the_local_dir(tmp_path):
    assert scripts(tmp_path / "missing") == []
    relative = {"storm.health.check.dir": "healthchecks", "storm.local.dir": str(tmp_path)}
    assert check_dir(relative) == tmp_path / "healthchecks"


def test_node_health_check_prints_each_result_and_exits_1_when_the_node_fails(tmp_path):
    checks = tmp_path / "checks"
    script(checks, "disk", "exit 0")
    path = tmp_path / "squall.yaml"
    path.write_text(f"storm.health.check.dir: {checks}\n")
    healthy = CliRunner().invoke(main, ["--config", str(path), "node-health-check"])
    assert (healthy.exit_code, healthy.output) == (0, f"{checks / 'disk'}: success\n")
    script(checks, "memory", "echo 'ERROR swap in use'; exit 1")
    failing = CliRunner().invoke(main, ["--config", str(path), "node-health-check"])
    assert failing.exit_code == 1
    assert "the node fails its health checks" in failing.output
    assert "memory: failed (exit 1: ERROR swap in use)" in failing.output


def test_a_null_directory_is_storms_default_and_an_unlistable_one_fails(tmp_path):
    assert check_dir({"storm.health.check.dir": None, "storm.local.dir": str(tmp_path)}) == (
        tmp_path / "healthchecks"
    )
    locked = tmp_path / "locked"
    locked.mkdir()
    locked.chmod(0)
    try:
        if os.access(locked, os.R_OK):  # root reads anything: nothing to test here
            return
        [result] = run_checks(conf(locked))
        assert result.status == FAILED and "cannot list it" in result.detail
    finally:
        locked.chmod(0o700)


def test_the_exit_judges_a_script_and_a_timeout_kills_what_it_started(tmp_path):
    """A script that exits 0 leaving a child that holds its output succeeded (Storm waits
    for the process only); one past its timeout is killed with its children."""
    checks = tmp_path / "checks"
    child = "sh -c 'echo $$ > {}; exec sleep 30' &"
    script(checks, "a-leaves-a-child", child.format(tmp_path / "a.pid") + "\nexit 0")
    script(checks, "b-hangs", child.format(tmp_path / "b.pid") + "\nsleep 30")
    pids = []
    try:
        results = run_checks(conf(checks, timeout_ms=1000))
        assert [r.status for r in results] == [SUCCESS, TIMEOUT]
        for name in ("a.pid", "b.pid"):
            pid_file = tmp_path / name
            wait_for(lambda f=pid_file: f.exists() and f.read_text().strip(), 10, name)
            pids.append(int(pid_file.read_text()))
        wait_for(lambda: not _alive(pids[1]), 10, "the timed-out script's child to end")
        assert _alive(pids[0])  # a script that succeeded keeps what it started, as in Storm
    finally:
        for pid in pids:
            with contextlib.suppress(ProcessLookupError):
                os.kill(pid, signal.SIGKILL)


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    return Path(f"/proc/{pid}/stat").read_text().split()[2] != "Z"  # not a zombie


def test_the_watch_fails_the_node_once_and_counts_a_check_that_raises(tmp_path):
    checks = tmp_path / "checks"
    script(checks, "disk", "echo 'ERROR disk full'; exit 1")
    failed, stopping = [], threading.Event()
    watching = {**conf(checks), "supervisor.health.check.interval.secs": 0.05}
    watch = HealthWatch(watching, stopping, failed.append)
    watch.start()
    watch.join(10)
    assert not watch.is_alive() and len(failed) == 1 and "ERROR disk full" in failed[0]
    broken = {**watching, "storm.health.check.timeout.ms": "soon"}  # raises in the check
    watch = HealthWatch(broken, stopping, failed.append)
    watch.start()
    watch.join(10)
    assert "the checks could not run: TypeError" in failed[1]
    stopping.set()  # a stopped supervisor's watch checks no more
    watch = HealthWatch(watching, stopping, failed.append)
    watch.start()
    watch.join(10)
    assert len(failed) == 2
