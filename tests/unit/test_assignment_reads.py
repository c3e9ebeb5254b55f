"""Which assignments a supervisor's sync re-reads (supervisor/sync.py assignment_reads)."""

from __future__ import annotations

from squall.supervisor.sync import AssignmentReads, assignment_reads


def test_before_the_children_are_known_everything_is_read():
    assert assignment_reads({"a"}, None, set(), False).full


def test_a_due_full_read_reads_everything():
    todo = assignment_reads({"a", "b"}, {"a", "b"}, set(), True)
    assert todo.full and todo.changed


def test_nothing_fired_nothing_new_reads_nothing():
    todo = assignment_reads({"a", "b"}, {"a", "b"}, set(), False)
    assert todo == AssignmentReads(frozenset(), frozenset(), False)
    assert not todo.changed


def test_only_fired_and_new_assignments_are_read_and_gone_ones_dropped():
    todo = assignment_reads({"a", "b", "c"}, {"a", "b", "d"}, {"b"}, False)
    assert todo.read == {"b", "d"}
    assert todo.drop == {"c"}
    assert todo.changed and not todo.full


def test_a_fired_watch_of_a_removed_assignment_drops_it_without_a_read():
    todo = assignment_reads({"a", "b"}, {"a"}, {"b"}, False)
    assert todo.read == frozenset() and todo.drop == {"b"}
