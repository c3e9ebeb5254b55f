"""What a supervisor runs follows the assignments, and ignores a deposed nimbus's writes."""

from squall.records import Assignment
from squall.supervisor.sync import accept_epochs, desired_workers, plan


def assignment(epoch, slots):
    return Assignment(epoch, "t", {"s1": "h"}, slots, {t: 0 for t in slots})


def test_desired_and_plan():
    a = assignment(1, {1: ("s1", 6700), 2: ("s1", 6701), 3: ("s2", 6700)})
    desired = desired_workers("s1", {"t": a})
    assert {k: s.tasks for k, s in desired.items()} == {("t", 6700): (1,), ("t", 6701): (2,)}
    todo = plan(desired, {("t", 6700): ((1,), 0), ("old", 6702): ((9,), 0)})
    assert [s.port for s in todo.start] == [6701]
    assert todo.stop == (("old", 6702),)


def test_changed_tasks_restart_the_worker():
    desired = desired_workers("s1", {"t": assignment(1, {1: ("s1", 6700), 2: ("s1", 6700)})})
    todo = plan(desired, {("t", 6700): ((1,), 0)})
    assert todo.stop == (("t", 6700),) and todo.start[0].tasks == (1, 2)


def test_a_task_restarted_in_place_restarts_its_worker():
    a = assignment(1, {1: ("s1", 6700)})
    restarted = Assignment(1, "t", {"s1": "h"}, {1: ("s1", 6700)}, {1: 99})
    running = {k: s.identity for k, s in desired_workers("s1", {"t": a}).items()}
    assert plan(desired_workers("s1", {"t": a}), running).start == ()
    todo = plan(desired_workers("s1", {"t": restarted}), running)
    assert todo.stop == (("t", 6700),) and todo.start[0].started == 99


def test_older_epoch_is_ignored():
    kept, seen = accept_epochs({"t": assignment(3, {})}, {})
    assert seen == {"t": 3} and "t" in kept
    kept, seen = accept_epochs({"t": assignment(2, {})}, seen)
    assert kept == {} and seen == {"t": 3}


def test_hung_worker_detected_on_the_supervisors_clock():
    from squall.supervisor.sync import BeatTracker

    tracker = BeatTracker({})
    key = ("t", 6700)
    started = {key: 0.0}
    tracker.observe({key: 1}, now=1)
    assert tracker.hung(started, now=20, timeout=30, start_timeout=5) == []
    tracker.observe({key: 1}, now=40)  # the same seq: no progress since t=1
    assert tracker.hung(started, now=40, timeout=30, start_timeout=5) == [key]
    tracker.observe({key: 2}, now=41)
    assert tracker.hung(started, now=50, timeout=30, start_timeout=5) == []


def test_a_beat_from_before_a_restart_does_not_count():
    from squall.supervisor.sync import BeatTracker

    tracker = BeatTracker({})
    key = ("t", 6700)
    tracker.observe({key: 9}, now=100)  # the old incarnation's last beat
    started = {key: 200.0}  # restarted at 200, never beat since
    assert tracker.hung(started, now=210, timeout=30, start_timeout=20) == []  # grace
    assert tracker.hung(started, now=231, timeout=30, start_timeout=20) == [key]


def test_the_same_epoch_and_epoch_zero_are_accepted():
    kept, seen = accept_epochs({"t": assignment(0, {})}, {})
    assert "t" in kept and seen == {"t": 0}
    kept, _ = accept_epochs({"t": assignment(3, {})}, {"t": 3})
    assert "t" in kept


def test_a_task_without_a_start_time_counts_as_started_at_zero():
    a = Assignment(1, "t", {"s1": "h"}, {1: ("s1", 6700)}, {})
    assert desired_workers("s1", {"t": a})[("t", 6700)].started == 0


def test_an_unchanged_seq_keeps_its_first_time_and_forget_drops_it():
    from squall.supervisor.sync import BeatTracker

    key = ("t", 6700)
    tracker = BeatTracker({})
    tracker.observe({key: 5}, now=10)
    tracker.observe({key: 5}, now=20)
    assert tracker.changed[key] == (5, 10)
    tracker.forget(key)
    assert tracker.changed == {}
