"""Node health checks as Storm's HealthChecker judges them: real scripts in a directory, run
with their timeout; the verdict, and `squall node-health-check`."""

import os
import stat

from click.testing import CliRunner

from squall.cli import main
from squall.supervisor.health_check import (
    FAILED,
    FAILED_WITH_EXIT_CODE,
    SUCCESS,
    TIMEOUT,
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
