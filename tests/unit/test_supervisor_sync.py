"""What a supervisor runs follows the assignments, and ignores a deposed nimbus's writes."""

from squall.records import Assignment
from squall.supervisor.sync import WorkerSpec, accept_epochs, by_port, desired_workers

PORTS = (6700, 6701, 6702)


def assignment(epoch, slots):
    return Assignment(epoch, "t", {"s1": "h"}, slots, {t: 0 for t in slots})


def test_desired_workers_by_port():
    a = assignment(1, {1: ("s1", 6700), 2: ("s1", 6701), 3: ("s2", 6700)})
    desired = desired_workers("s1", {"t": a}, PORTS)
    assert {k: s.tasks for k, s in desired.items()} == {("t", 6700): (1,), ("t", 6701): (2,)}
    assert by_port(desired) == {6700: desired[("t", 6700)], 6701: desired[("t", 6701)]}


def test_two_topologies_on_one_port_run_the_first():
    first, second = WorkerSpec("a", 6700, (1,), 0), WorkerSpec("b", 6700, (2,), 0)
    assert by_port({("b", 6700): second, ("a", 6700): first}) == {6700: first}


def test_changed_tasks_or_a_task_restarted_in_place_change_the_identity():
    """What slot.py compares with its worker's to stop and restart it."""
    a = assignment(1, {1: ("s1", 6700)})
    more = assignment(1, {1: ("s1", 6700), 2: ("s1", 6700)})
    restarted = Assignment(1, "t", {"s1": "h"}, {1: ("s1", 6700)}, {1: 99})
    before = desired_workers("s1", {"t": a}, PORTS)[("t", 6700)]
    assert desired_workers("s1", {"t": a}, PORTS)[("t", 6700)].identity == before.identity
    for changed in (more, restarted):
        assert desired_workers("s1", {"t": changed}, PORTS)[("t", 6700)].identity != before.identity


def test_older_epoch_is_ignored():
    first = accept_epochs({"t": assignment(3, {})}, 3, {}, {})
    assert first.seen == {"t": 3} and "t" in first.assignments and first.refused == ()
    later = accept_epochs({"t": assignment(2, {})}, 3, first.seen, {})
    assert later.assignments == {} and later.seen == {"t": 3} and later.refused == ("t",)


def test_the_same_epoch_and_epoch_zero_are_accepted():
    accepted = accept_epochs({"t": assignment(0, {})}, 0, {}, {})
    assert "t" in accepted.assignments and accepted.seen == {"t": 0}
    accepted = accept_epochs({"t": assignment(3, {})}, 3, {"t": 3}, {})
    assert "t" in accepted.assignments


def test_a_task_without_a_start_time_counts_as_started_at_zero():
    a = Assignment(1, "t", {"s1": "h"}, {1: ("s1", 6700)}, {})
    assert desired_workers("s1", {"t": a}, PORTS)[("t", 6700)].started == 0


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
