"""The offset tracker commits only the end of a contiguous run of acked batches, replays
only what is in flight, and keeps the cuts a successor needs to cut its batches alike."""

import pytest
from hypothesis import given
from hypothesis import strategies as st

from squall.recipes.offsets import OffsetTracker, Position


def test_commits_only_behind_contiguous_acks():
    t = OffsetTracker.starting_at(Position(100))
    for end in (110, 120, 125):
        t.emitted(end, cut=False)
    assert t.in_flight == {100: 110, 110: 120, 120: 125}
    assert t.ack(110) and t.committed == 100  # a gap before it: nothing commits
    assert t.ack(100) and t.committed == 120  # the gap filled: both commit
    assert t.ack(100) is False  # a second verdict changes nothing
    assert not t.ack(105) and t.committed == 120  # never emitted
    assert t.ack(120) and t.committed == 125
    assert t.position() == Position(125)


def test_a_failed_batch_in_flight_is_replayed_and_nothing_else():
    t = OffsetTracker.starting_at(Position(0))
    t.emitted(10, cut=False)
    assert t.fail(0) and not t.fail(10)
    assert t.in_flight == {0: 10}  # still in flight: its replay is acked under the same first
    t.ack(0)
    assert not t.fail(0)


def test_batches_end_at_stored_cuts_and_new_cuts_are_reported():
    t = OffsetTracker.starting_at(Position(0, (3, 15)))
    assert t.batch_end(10) == 3
    assert t.emitted(3, cut=True) is False  # the cut was stored already: nothing new to store
    assert t.batch_end(10) == 13
    assert not t.emitted(13, cut=False)
    assert t.batch_end(10) == 15
    t.emitted(15, cut=False)
    assert t.batch_end(10) == 25
    assert t.emitted(20, cut=True)  # a new early end: to be stored before emitting
    assert t.position() == Position(0, (3, 15, 20))
    t.ack(0)
    assert t.position() == Position(3, (15, 20))  # cuts behind the offset are pruned


def test_an_empty_batch_is_refused():
    t = OffsetTracker.starting_at(Position(5))
    with pytest.raises(ValueError):
        t.emitted(5, cut=False)


def test_a_position_keeps_only_cuts_past_its_offset_in_order():
    assert Position(10, (30, 5, 10, 20)).cuts == (20, 30)


@given(
    st.lists(st.integers(1, 5), min_size=1, max_size=12),
    st.data(),
)
def test_committed_is_the_end_of_the_acked_prefix(sizes, data):
    t = OffsetTracker.starting_at(Position(7))
    ends, end = [], 7
    for size in sizes:
        end += size
        t.emitted(end, cut=False)
        ends.append(end)
    firsts = [7, *ends[:-1]]
    order = data.draw(st.permutations(range(len(sizes))))
    count = data.draw(st.integers(0, len(sizes)))
    acked = set(order[:count])
    for i in order[:count]:
        assert t.ack(firsts[i])
    prefix = 0
    while prefix in acked:
        prefix += 1
    assert t.committed == (7 if prefix == 0 else ends[prefix - 1])
    assert set(t.in_flight) == {firsts[i] for i in range(len(sizes)) if i not in acked}
    assert all(t.fail(firsts[i]) != (i in acked) for i in range(len(sizes)))
