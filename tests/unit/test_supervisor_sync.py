"""What a supervisor runs follows the assignments, and ignores a deposed nimbus's writes."""

from squall.processes import WORKER_REASSIGNED
from squall.records import Assignment
from squall.supervisor.backoff import Retry
from squall.supervisor.launcher import Exit
from squall.supervisor.sync import (
    WorkerSpec,
    accept_epochs,
    desired_workers,
    plan,
    reassigned_away,
    startable,
)

PORTS = (6700, 6701, 6702)


def assignment(epoch, slots):
    return Assignment(epoch, "t", {"s1": "h"}, slots, {t: 0 for t in slots})


def test_desired_and_plan():
    a = assignment(1, {1: ("s1", 6700), 2: ("s1", 6701), 3: ("s2", 6700)})
    desired = desired_workers("s1", {"t": a}, PORTS)
    assert {k: s.tasks for k, s in desired.items()} == {("t", 6700): (1,), ("t", 6701): (2,)}
    todo = plan(desired, {("t", 6700): ((1,), 0), ("old", 6702): ((9,), 0)})
    assert [s.port for s in todo.start] == [6701]
    assert todo.stop == (("old", 6702),)


def test_changed_tasks_restart_the_worker():
    desired = desired_workers("s1", {"t": assignment(1, {1: ("s1", 6700), 2: ("s1", 6700)})}, PORTS)
    todo = plan(desired, {("t", 6700): ((1,), 0)})
    assert todo.stop == (("t", 6700),) and todo.start[0].tasks == (1, 2)


def test_a_task_restarted_in_place_restarts_its_worker():
    a = assignment(1, {1: ("s1", 6700)})
    restarted = Assignment(1, "t", {"s1": "h"}, {1: ("s1", 6700)}, {1: 99})
    running = {k: s.identity for k, s in desired_workers("s1", {"t": a}, PORTS).items()}
    assert plan(desired_workers("s1", {"t": a}, PORTS), running).start == ()
    todo = plan(desired_workers("s1", {"t": restarted}, PORTS), running)
    assert todo.stop == (("t", 6700),) and todo.start[0].started == 99


def test_a_worker_that_stopped_itself_for_a_new_assignment_did_not_fail():
    old = desired_workers("s1", {"t": assignment(1, {1: ("s1", 6700)})}, PORTS)
    ran = old[("t", 6700)].identity
    moved = desired_workers("s1", {"t": assignment(1, {1: ("s1", 6701)})}, PORTS)
    assert reassigned_away(Exit(("t", 6700), 0, 50.0, "", ran), moved)  # its task moved
    assert reassigned_away(Exit(("t", 6700), 0, 50.0, "", ran), {})  # the topology went
    assert not reassigned_away(Exit(("t", 6700), 0, 50.0, "", ran), old)  # still wanted
    assert not reassigned_away(Exit(("t", 6700), 1, 50.0, "", ran), moved)  # a crash
    assert not reassigned_away(Exit(("t", 6700), -9, 50.0, "", ran), {})
    reassigned = WORKER_REASSIGNED  # what a worker of this version exits with
    assert reassigned_away(Exit(("t", 6700), reassigned, 50.0, "", ran), moved)
    assert not reassigned_away(Exit(("t", 6700), reassigned, 50.0, "", ran), old)  # backs off


def test_older_epoch_is_ignored():
    first = accept_epochs({"t": assignment(3, {})}, 3, {}, {})
    assert first.seen == {"t": 3} and "t" in first.assignments and first.refused == ()
    later = accept_epochs({"t": assignment(2, {})}, 3, first.seen, {})
    assert later.assignments == {} and later.seen == {"t": 3} and later.refused == ("t",)


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


def test_no_worker_is_hung_while_zookeeper_is_away_and_each_gets_a_timeout_after():
    """Beats travel through ZooKeeper: an outage longer than the timeout stopped every
    worker of every supervisor as soon as the supervisor read their beats again."""
    from squall.supervisor.sync import BeatTracker

    tracker = BeatTracker({})
    quiet, stuck = ("t", 6700), ("t", 6701)
    started = {quiet: 0.0, stuck: 0.0}
    tracker.observe({quiet: 1, stuck: 1}, now=10)
    tracker.zookeeper_away()
    assert tracker.hung(started, now=100, timeout=30, start_timeout=5) == []
    tracker.zookeeper_back(now=100)
    tracker.observe({quiet: 1, stuck: 1}, now=101)  # nobody has beaten since 10
    assert tracker.hung(started, now=101, timeout=30, start_timeout=5) == []
    tracker.observe({quiet: 2, stuck: 1}, now=120)  # one beats again after the return
    assert tracker.hung(started, now=131, timeout=30, start_timeout=5) == [stuck]


def test_a_worker_started_after_zookeeper_came_back_is_judged_as_before():
    from squall.supervisor.sync import BeatTracker

    tracker = BeatTracker({})
    tracker.zookeeper_away()
    tracker.zookeeper_back(now=50)
    key = ("t", 6700)
    assert tracker.hung({key: 60.0}, now=91, timeout=30, start_timeout=20) == [key]


def test_the_same_epoch_and_epoch_zero_are_accepted():
    accepted = accept_epochs({"t": assignment(0, {})}, 0, {}, {})
    assert "t" in accepted.assignments and accepted.seen == {"t": 0}
    accepted = accept_epochs({"t": assignment(3, {})}, 3, {"t": 3}, {})
    assert "t" in accepted.assignments


def test_a_task_without_a_start_time_counts_as_started_at_zero():
    a = Assignment(1, "t", {"s1": "h"}, {1: ("s1", 6700)}, {})
    assert desired_workers("s1", {"t": a}, PORTS)[("t", 6700)].started == 0


def test_an_unchanged_seq_keeps_its_first_time_and_forget_drops_it():
    from squall.supervisor.sync import BeatTracker

    key = ("t", 6700)
    tracker = BeatTracker({})
    tracker.observe({key: 5}, now=10)
    tracker.observe({key: 5}, now=20)
    assert tracker.changed[key] == (5, 10)
    tracker.forget(key)
    assert tracker.changed == {}


# --- epoch trust: an assignment no nimbus wrote is never acted on (#11) ---

REAL = assignment(1, {1: ("s1", 6700)})
FORGED = assignment(1_000_000, {1: ("s1", 6701)})


def test_an_epoch_above_the_current_one_is_refused_and_the_accepted_one_stays():
    accepted = accept_epochs({"t": FORGED}, 1, {"t": 1}, {"t": REAL})
    assert accepted.assignments == {"t": REAL}
    assert accepted.seen == {"t": 1}  # the forged epoch never raises the high-water mark
    assert accepted.refused == ("t",)


def test_a_forged_first_assignment_is_refused_without_a_previous_one():
    accepted = accept_epochs({"t": FORGED}, 1, {}, {})
    assert accepted.assignments == {} and accepted.seen == {} and accepted.refused == ("t",)


def test_the_real_leaders_next_write_wins_after_a_forged_one():
    forged = accept_epochs({"t": FORGED}, 1, {"t": 1}, {"t": REAL})
    moved = assignment(1, {1: ("s1", 6702)})
    real = accept_epochs({"t": moved}, 1, forged.seen, forged.assignments)
    assert real.assignments == {"t": moved} and real.refused == ()


def test_the_current_epoch_itself_is_trusted_and_one_above_is_not():
    at = accept_epochs({"t": assignment(5, {})}, 5, {}, {})
    above = accept_epochs({"t": assignment(6, {})}, 5, {}, {})
    assert "t" in at.assignments and at.refused == ()
    assert above.assignments == {} and above.refused == ("t",)


def test_an_unreadable_current_epoch_trusts_nothing_new():
    accepted = accept_epochs({"t": REAL, "u": assignment(1, {})}, None, {"t": 1}, {"t": REAL})
    assert accepted.assignments == {"t": REAL}
    assert accepted.refused == ("t", "u") and accepted.seen == {"t": 1}


def test_a_high_water_mark_above_the_current_epoch_is_dropped():
    """A mark from before a reset of /nimbus/epoch cannot lock the leader's writes out."""
    accepted = accept_epochs({"t": REAL}, 1, {"t": 7}, {})
    assert accepted.assignments == {"t": REAL} and accepted.seen == {"t": 1}
    older = assignment(3, {})
    assert accept_epochs({"t": older}, 5, {"t": 7}, {}).assignments == {"t": older}


def test_a_refused_assignment_keeps_its_topologys_mark():
    stale = accept_epochs({"t": assignment(2, {})}, 4, {"t": 3}, {})
    assert stale.seen == {"t": 3} and stale.refused == ("t",)
    at_mark = accept_epochs({"t": assignment(2, {})}, 3, {"t": 3}, {})
    assert at_mark.assignments == {} and at_mark.refused == ("t",)


def test_a_topology_gone_from_zookeeper_is_dropped_with_its_mark():
    accepted = accept_epochs({}, 1, {"t": 1}, {"t": REAL})
    assert accepted.assignments == {} and accepted.seen == {} and accepted.refused == ()


def test_a_negative_epoch_is_refused():
    accepted = accept_epochs({"t": assignment(-1, {})}, 3, {}, {})
    assert accepted.assignments == {} and accepted.refused == ("t",)


def test_only_this_supervisors_configured_ports_are_desired():
    a = assignment(1, {1: ("s1", 6700), 2: ("s1", 22), 3: ("s2", 6701)})
    assert set(desired_workers("s1", {"t": a}, (6700, 6701))) == {("t", 6700)}


def test_epoch_zero_is_accepted_under_a_later_epoch_and_after_a_dropped_mark():
    zero = assignment(0, {})
    assert accept_epochs({"t": zero}, 3, {}, {}).assignments == {"t": zero}
    assert accept_epochs({"t": zero}, 5, {"t": 7}, {}).assignments == {"t": zero}


def test_every_topology_is_decided_on_its_own():
    a, b, forged = assignment(1, {}), assignment(2, {}), assignment(9, {})
    accepted = accept_epochs({"a": a, "b": b, "c": forged}, 2, {}, {})
    assert accepted.assignments == {"a": a, "b": b}
    assert accepted.seen == {"a": 1, "b": 2} and accepted.refused == ("c",)


def test_starts_wait_for_their_code_and_their_back_off_only():
    good, bad, crashed = (
        WorkerSpec("good", 1, (1,), 0),
        WorkerSpec("bad", 2, (2,), 0),
        WorkerSpec("good", 3, (3,), 0),
    )
    ready = {"good"}.__contains__
    restarts = {("good", 3): Retry(2, 10.0)}
    assert startable([good, bad, crashed], ready, restarts, 9.0) == (good,)
    assert startable([good, bad, crashed], ready, restarts, 10.0) == (good, crashed)
