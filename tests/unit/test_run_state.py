"""Whether a topology's tasks run, as nimbus says it beside the scheduler's status: a
topology that cannot start shows why, not ACTIVE with zeros."""

from squall.nimbus.core.heartbeats import HeartbeatCache, TaskBeat
from squall.nimbus.core.model import TopologyModel
from squall.nimbus.reads.run_state import RunCount, headline, recent_error, run_count, run_status
from squall.records import Assignment, StormBase

SLOT = ("s1", 6700)


def topology(beats: dict[int, float], assigned_at: dict[int, float]) -> TopologyModel:
    tasks = {1: "spout", 2: "bolt", 3: "bolt"}
    return TopologyModel(
        id="t-1",
        base=StormBase("t", "active", 1000, 1, {"spout": 1, "bolt": 2}),
        tasks=tasks,
        assignment=Assignment(1, "t-1", {"s1": "h1"}, dict.fromkeys(tasks, SLOT), {}),
        heartbeats=HeartbeatCache({t: TaskBeat(("s1", 6700, 1), at) for t, at in beats.items()}),
        assigned_at=assigned_at,
    )


def test_tasks_with_current_beats_run_the_rest_start_then_are_down():
    t = topology({1: 100.0, 2: 95.0}, dict.fromkeys((1, 2, 3), 90.0))
    assert run_count(t, 110.0, 30, 120) == RunCount(3, starting=1, down=0, waiting_secs=20.0)
    # past the launch grace the beatless task is down; past the timeout the stale one too
    assert run_count(t, 211.0, 30, 120) == RunCount(3, starting=0, down=3, waiting_secs=121.0)
    assert run_count(t, 126.0, 30, 120) == RunCount(3, starting=1, down=1, waiting_secs=36.0)


def test_a_beat_from_before_the_assignment_does_not_count():
    t = topology({1: 50.0, 2: 50.0, 3: 50.0}, dict.fromkeys((1, 2, 3), 90.0))
    assert run_count(t, 100.0, 30, 120).starting == 3


def test_the_status_names_the_count_and_the_recent_error():
    count = RunCount(3, starting=1, down=1, waiting_secs=40.0)
    missing = "ModuleNotFoundError: No module named 'geo'\n  File x"
    errors = {
        "bolt": [{"error": missing, "time_secs": 990}],
        "__supervisor": [{"error": "old: cannot fetch", "time_secs": 900}],
    }
    last = recent_error(errors, count, wall_now=1000.0)
    assert last == "ModuleNotFoundError: No module named 'geo'\n  File x"
    assert run_status("Fully Scheduled", count, last, "ACTIVE") == (
        "1 of 3 tasks not running; 1 of 3 tasks starting; "
        "last error: ModuleNotFoundError: No module named 'geo'"
    )


def test_a_tasks_own_error_is_the_cause_before_its_supervisors_report_of_the_exit():
    count = RunCount(2, starting=2, waiting_secs=30.0)
    errors = {
        "geocode": [{"error": "ModuleNotFoundError: No module named 'geo'", "time_secs": 980}],
        "__supervisor": [{"error": "worker t:6700 exited with code 3 after 9s", "time_secs": 990}],
    }
    assert recent_error(errors, count, 1000.0) == "ModuleNotFoundError: No module named 'geo'"
    fetch = {"__supervisor": [{"error": "cannot use the topology's code: ...", "time_secs": 995}]}
    assert recent_error(fetch, count, 1000.0) == "cannot use the topology's code: ..."


def test_an_error_from_before_the_assignment_is_not_the_cause():
    count = RunCount(3, starting=3, waiting_secs=5.0)
    stale = {"bolt": [{"error": "ValueError: from the last run", "time_secs": 900}]}
    assert recent_error(stale, count, wall_now=1000.0) is None
    assert run_status("", count, None, "ACTIVE") == "3 of 3 tasks starting"


def test_all_running_or_killed_says_only_what_the_scheduler_said():
    assert run_status("Fully Scheduled", RunCount(3), None, "ACTIVE") == "Fully Scheduled"
    assert run_status("", RunCount(3, down=3), "boom", "KILLED") == ""
    assert recent_error({"b": [{"error": "x", "time_secs": 1}]}, RunCount(3), 10.0) is None


def test_a_beat_saying_not_ready_is_a_task_starting_then_down():
    """A worker beats while its tasks initialize: a task whose initialize failed beat once
    with ready false before its worker exited, and looked alive for a whole timeout."""
    t = topology({1: 100.0, 2: 100.0, 3: 100.0}, dict.fromkeys((1, 2, 3), 90.0))
    beats = dict(t.heartbeats.beats)
    beats[3] = TaskBeat(("s1", 6700, 1), 100.0, ready=False)
    t = TopologyModel(**{**t.__dict__, "heartbeats": HeartbeatCache(beats)})
    assert run_count(t, 105.0, 30, 120) == RunCount(3, starting=1, waiting_secs=15.0)
    assert run_count(t, 215.0, 300, 120) == RunCount(3, down=1, waiting_secs=125.0)


def test_readiness_is_read_from_the_beat_of_the_tasks_own_slot():
    from squall.nimbus.core.heartbeats import unready_tasks
    from squall.records import WorkerBeat

    beats = {
        ("s1", 6700): WorkerBeat(5, 0, 0, {1: {"ready": True}, 2: {"ready": False}, 3: {}}),
        ("s2", 6700): WorkerBeat(2, 0, 0, {4: {"ready": False}}),  # the slot 4 left
    }
    placement = {1: ("s1", 6700), 2: ("s1", 6700), 3: ("s1", 6700), 4: ("s1", 6701)}
    assert unready_tasks(beats, placement) == {2}
    cache = HeartbeatCache().observe({2: ("s1", 6700, 5), 1: ("s1", 6700, 5)}, 7.0, {2})
    assert (cache.beats[1].ready, cache.beats[2].ready) == (True, False)


def test_a_workers_exit_is_shown_with_the_last_of_its_last_lines():
    """The supervisor's report's first line names only the exit code; the cause is in the
    lines the worker printed last (its restart note is not one of them)."""
    count = RunCount(2, starting=2, waiting_secs=30.0)
    exited = (
        "worker t:6700 exited with code 3 after 5s; its last lines:\n"
        "starting task 2\ncannot open /etc/key: set GEOCODER_LICENCE\n\n(restarting in 4s)"
    )
    assert run_status("", count, exited, "ACTIVE") == (
        "2 of 2 tasks starting; last error: worker t:6700 exited with code 3 after 5s; its "
        "last lines: cannot open /etc/key: set GEOCODER_LICENCE"
    )
    bare = "worker t:6700 was killed by signal 9 after 5s; its last lines:\n\n(restarting in 4s)"
    assert headline(bare) == "worker t:6700 was killed by signal 9 after 5s; its last lines:"
    assert headline("") == ""
