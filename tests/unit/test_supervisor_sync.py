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
