"""The spout's decisions, asserted as instruction lists: tracking, max pending, message
timeouts, untracked acks and exactly one verdict per message id."""

import itertools

import pytest

from squall.worker.acking import (
    CallAck,
    CallFail,
    InitTree,
    Send,
    TreeDone,
    TreeFailed,
)
from squall.worker.spout_tracking import SpoutTracker

TASK = 7


def tracker(ackers=(10, 11), timeout=30, max_pending=0):
    ids = itertools.count(1)
    return SpoutTracker(TASK, ackers, timeout, max_pending, lambda: next(ids))


def test_a_tracked_emit_gets_a_root_an_edge_per_target_and_an_init_to_its_acker():
    t = tracker()
    out = t.emitted("m", (5, 6), now=0)
    # root 1 -> acker ackers[1 % 2] == 11; edges 2 and 3
    assert out == [Send(5, (1,), (2,)), Send(6, (1,), (3,)), InitTree(11, 1, 2 ^ 3, TASK)]
    assert dict(t.pending) == {1: ("m", 0)}
    out = t.emitted("n", (5,), now=1)
    assert out == [Send(5, (4,), (5,)), InitTree(10, 4, 5, TASK)]  # root 4 -> acker 10


def test_an_emit_without_a_message_id_is_untracked_and_never_acked():
    t = tracker()
    assert t.emitted(None, (5, 6), now=0) == [Send(5), Send(6)]
    assert not t.pending and t.tick(100) == []


@pytest.mark.parametrize("ackers,targets", [((), (5,)), ((10,), ())])
def test_untracked_message_ids_are_acked_at_the_next_tick_once(ackers, targets):
    """No ackers, or no target: Storm acks the message id at once (here: next tick, never
    inside next_tuple)."""
    t = tracker(ackers=ackers)
    assert t.emitted("m", targets, now=0) == [Send(x) for x in targets]
    assert not t.pending
    assert t.tick(0) == [CallAck("m")]
    assert t.tick(1) == []


def test_no_target_uses_no_ids():
    t = tracker()
    t.emitted("m", (), now=0)
    assert t.emitted("n", (5,), now=0)[0] == Send(5, (1,), (2,))


def test_acker_verdicts_call_ack_or_fail_exactly_once():
    t = tracker()
    t.emitted("m", (5,), now=0)  # root 1
    t.emitted("n", (5,), now=0)  # root 3
    assert t.verdicts([TreeDone(TASK, 1)], now=0) == [CallAck("m")]
    assert t.verdicts([TreeDone(TASK, 1)], now=0) == []
    assert t.verdicts([TreeFailed(TASK, 3)], now=0) == [CallFail("n")]
    assert (
        t.verdicts([TreeFailed(TASK, 3)], now=0) == []
        and t.verdicts([TreeDone(TASK, 3)], now=0) == []
    )
    assert t.verdicts([TreeDone(TASK, 99)], now=0) == [] and not t.pending


def test_a_tree_older_than_the_timeout_fails_once_and_its_late_verdict_is_ignored():
    t = tracker(timeout=30)
    t.emitted("m", (5,), now=0)  # root 1
    t.emitted("n", (5,), now=10)  # root 3
    assert t.tick(30) == []  # exactly the timeout: still in time
    assert t.tick(30.5) == [CallFail("m")]
    assert list(t.pending) == [3]
    assert t.verdicts([TreeDone(TASK, 1)], now=0) == []
    assert t.tick(40) == []
    assert t.tick(41) == [CallFail("n")] and not t.pending


def test_a_tick_fails_timeouts_before_acking_untracked_ids():
    t = tracker(timeout=1)
    t.emitted("old", (5,), now=0)
    t.emitted("free", (), now=0)
    assert t.tick(2) == [CallFail("old"), CallAck("free")]


def test_max_spout_pending_bounds_tracked_tuples_in_flight():
    t = tracker(max_pending=2)
    assert t.can_emit
    t.emitted("a", (5,), now=0)
    assert t.can_emit
    t.emitted("b", (5,), now=0)  # root 3
    assert not t.can_emit
    t.emitted(None, (5,), now=0)  # untracked: not counted
    assert len(t.pending) == 2
    t.verdicts([TreeDone(TASK, 3)], now=0)
    assert t.can_emit


def test_max_spout_pending_zero_means_no_limit():
    t = tracker(max_pending=0)
    for i in range(50):
        t.emitted(i, (5,), now=0)
    assert t.can_emit and len(t.pending) == 50


def test_what_is_not_a_verdict_raises():
    with pytest.raises(TypeError):
        tracker().verdicts([Send(5)], now=0)


def test_complete_latency_is_measured_from_emit_to_the_verdicts_arrival():
    t = tracker()
    t.emitted("a", (5,), now=1.0)  # root 1
    t.emitted("b", (5,), now=2.0)  # root 3
    t.emitted("c", (5,), now=3.0)  # root 5
    assert t.verdicts([TreeDone(TASK, 1)], now=1.25) == [CallAck("a")]
    assert t.verdicts([TreeFailed(TASK, 3)], now=9.0) == [CallFail("b")]
    assert t.verdicts([TreeDone(TASK, 3)], now=9.5) == []  # already failed
    assert t.verdicts([TreeDone(TASK, 5)], now=3.5) == [CallAck("c")]
    # acks only: a failure or a late duplicate measures nothing
    assert t.latency.summary() == {"count": 2, "avg": 375.0, "p50": 250.0, "p99": 500.0}


def test_roots_are_drawn_for_an_acker_in_the_spouts_own_worker():
    import random

    from squall.worker.acking import AckIds, acker_for

    for near, ackers in (((11,), (10, 11)), ((10,), (10, 11)), ((21, 23), (20, 21, 22, 23))):
        t = SpoutTracker(TASK, ackers, 30, 0, AckIds(random.Random(5)), near_ackers=near)
        for n in range(200):
            out = t.emitted(n, (5,), now=0)
            init = out[-1]
            assert init.acker in near and acker_for(ackers, init.root) == init.acker
            assert init.root != 0 and -(1 << 62) <= init.root < 1 << 62  # ID_BITS
        used = {acker_for(ackers, root) for root in t.pending}
        assert used == set(near)  # every near acker gets trees, no other acker does
    ids = iter([2, 7, 9])  # 2 % 2 == 0 is moved to 3 (acker 11), its edge is 7
    t = SpoutTracker(TASK, (10, 11), 30, 0, lambda: next(ids), near_ackers=(11,))
    assert t.emitted("m", (5,), now=0) == [
        Send(5, (3,), (7,)),
        InitTree(11, 3, 7, TASK),
    ]
    far = SpoutTracker(TASK, (10, 11), 30, 0, iter([-1, 4]).__next__, near_ackers=(12,))
    assert far.emitted("m", (5,), now=0)[-1].root == -1  # no near acker: as drawn
