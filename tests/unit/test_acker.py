"""The acker's XOR bookkeeping, asserted as instruction lists."""

import pytest

from squall.worker.acker import Acker
from squall.worker.acking import (
    AckerReceived,
    AckTree,
    FailTree,
    InitTree,
    Send,
    Tick,
    TreeDone,
    TreeFailed,
)

ROOT, SPOUT = 42, 7


def got(acker, message, now=0.0):
    return acker.handle(AckerReceived(message, now))


def test_a_tree_completes_exactly_when_its_xor_reaches_zero():
    a, b, c = 0b0011, 0b0101, 0b1001
    acker = Acker(timeout=30)
    assert got(acker, InitTree(1, ROOT, a ^ b, SPOUT)) == []
    assert got(acker, AckTree(1, ROOT, a ^ c)) == []
    assert got(acker, AckTree(1, ROOT, b ^ c)) == [TreeDone(SPOUT, ROOT)]
    assert not acker.trees
    assert got(acker, AckTree(1, ROOT, 5)) == []  # late: a new, never complete, entry


def test_acks_may_overtake_the_init():
    acker = Acker(timeout=30)
    assert got(acker, AckTree(1, ROOT, 0b011)) == []
    assert got(acker, AckTree(1, ROOT, 0b011)) == []  # xor zero, but no init yet
    assert got(acker, AckTree(1, ROOT, 0b110)) == []
    assert got(acker, InitTree(1, ROOT, 0b110, SPOUT)) == [TreeDone(SPOUT, ROOT)]


def test_roots_are_independent():
    acker = Acker(timeout=30)
    got(acker, InitTree(1, ROOT, 5, SPOUT))
    got(acker, InitTree(1, ROOT + 1, 6, SPOUT + 1))
    assert got(acker, AckTree(1, ROOT + 1, 6)) == [TreeDone(SPOUT + 1, ROOT + 1)]
    assert list(acker.trees) == [ROOT]


def test_a_fail_tells_the_spout_once():
    acker = Acker(timeout=30)
    got(acker, InitTree(1, ROOT, 5, SPOUT))
    assert got(acker, FailTree(1, ROOT)) == [TreeFailed(SPOUT, ROOT)]
    assert got(acker, FailTree(1, ROOT)) == []
    assert got(acker, AckTree(1, ROOT, 5)) == []


def test_a_fail_before_the_init_tells_nobody():
    acker = Acker(timeout=30)
    got(acker, AckTree(1, ROOT, 5))
    assert got(acker, FailTree(1, ROOT)) == [] and not acker.trees


def test_trees_older_than_the_timeout_are_forgotten_from_their_first_message():
    acker = Acker(timeout=30)
    got(acker, InitTree(1, ROOT, 5, SPOUT), now=0)
    got(acker, AckTree(1, ROOT, 1), now=20)
    got(acker, InitTree(1, ROOT + 1, 5, SPOUT), now=10)
    assert acker.handle(Tick(30)) == [] and len(acker.trees) == 2
    acker.handle(Tick(30.5))
    assert list(acker.trees) == [ROOT + 1]
    acker.handle(Tick(40.5))
    assert not acker.trees


def test_unknown_events_and_messages_raise():
    with pytest.raises(TypeError):
        Acker(30).handle(Send(1))
    with pytest.raises(TypeError):
        got(Acker(30), TreeDone(1, 2))


def test_a_wake_ups_messages_as_one_event_give_the_verdicts_one_by_one_would():
    from squall.worker.acking import AckerReceivedMany

    a, b = 0b0011, 0b0101
    messages = [
        AckTree(1, ROOT, a),  # overtakes its init
        InitTree(1, ROOT + 1, b, SPOUT + 1),
        InitTree(1, ROOT, a, SPOUT),  # ROOT completes here, mid-batch
        FailTree(1, ROOT + 2),  # unknown root: nothing
        AckTree(1, ROOT + 3, a),  # no init yet: pending
        FailTree(1, ROOT + 3),  # failed before its init: no verdict, forgotten
        AckTree(1, ROOT + 1, b),
    ]
    batch = Acker(timeout=30)
    out = batch.handle(AckerReceivedMany(messages, 5.0))
    assert out == [TreeDone(SPOUT, ROOT), TreeDone(SPOUT + 1, ROOT + 1)]
    assert not batch.trees
    single = Acker(timeout=30)
    assert [v for m in messages for v in got(single, m, 5.0)] == out
    fail = Acker(timeout=30)
    fail.handle(AckerReceivedMany([InitTree(1, ROOT, a, SPOUT), FailTree(1, ROOT)], 0.0))
    assert fail.handle(AckerReceivedMany([AckTree(1, ROOT, a)], 0.0)) == []
    assert fail.handle(AckerReceivedMany([InitTree(1, 9, a, 0), FailTree(1, 9)], 0.0)) == [
        TreeFailed(0, 9)
    ]
    with pytest.raises(TypeError):
        fail.handle(AckerReceivedMany([TreeDone(1, 2)], 0.0))
