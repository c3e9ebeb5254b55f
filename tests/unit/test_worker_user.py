"""supervisor.run.worker.as.user: refused without root, and never runs a worker as root."""

import pytest

from squall.supervisor.launcher import (
    Exit,
    WorkerUserError,
    check_run_as_user,
    worker_identity,
    worker_user,
)

ON = {"supervisor.run.worker.as.user": True}


def test_off_by_default_runs_as_the_supervisor():
    check_run_as_user({"supervisor.run.worker.as.user": False}, 1000)
    assert worker_user({"supervisor.run.worker.as.user": False}) is None


def test_on_without_root_is_a_clear_startup_error():
    with pytest.raises(WorkerUserError, match="does not run as root"):
        check_run_as_user(ON, 1000)
    check_run_as_user(ON, 0)


def test_on_runs_as_the_submitter_never_root_never_nobody_named():
    assert worker_user({**ON, "topology.submitter.user": "alice"}) == "alice"
    with pytest.raises(WorkerUserError, match="names no topology.submitter.user"):
        worker_user(ON)
    with pytest.raises(WorkerUserError, match="as root"):
        worker_user({**ON, "topology.submitter.user": "root"})


def test_an_exit_says_how_the_worker_ended():
    killed = Exit(("t-1", 6700), -9, 3.2, "last line")
    assert killed.describe() == (
        "worker t-1:6700 was killed by signal 9 after 3s; its last lines:\nlast line"
    )
    assert "exited with code 1" in Exit(("t", 1), 1, 0, "").describe()


def test_an_unknown_user_is_a_clear_error():
    assert worker_identity(None) == {}
    with pytest.raises(WorkerUserError, match="no user 'no-such-user-squall'"):
        worker_identity("no-such-user-squall")
