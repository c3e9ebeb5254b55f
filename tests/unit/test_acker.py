"""The acker's XOR bookkeeping, asserted as instruction lists."""

import pytest

from squall.worker.acker import Acker
from squall.worker.acking import (
    AckTree,
    FailTree,
    InitTree,
    Send,
    TreeDone,
    TreeFailed,
)

ROOT, SPOUT = 42, 7


def got(acker, message, now=0.0):
    return acker.received([message], now)


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


def test_a_fail_before_the_init_is_told_when_the_init_comes():
    """Storm's Acker keeps it too: forgotten, the tree would wait for its timeout."""
    acker = Acker(timeout=30)
    got(acker, AckTree(1, ROOT, 5))
    assert got(acker, FailTree(1, ROOT)) == []
    assert got(acker, FailTree(1, ROOT)) == []  # twice: still one verdict
    assert got(acker, AckTree(1, ROOT, 5)) == []  # the XOR reaches zero: no spout yet
    assert got(acker, InitTree(1, ROOT, 6, SPOUT)) == [TreeFailed(SPOUT, ROOT)]
    assert not acker.trees and not acker.failed
    assert got(acker, FailTree(1, ROOT + 1)) == [] and ROOT + 1 in acker.failed
    acker.expire(31)  # its init never came
    assert not acker.trees and not acker.failed


def test_trees_older_than_the_timeout_are_forgotten_from_their_first_message():
    acker = Acker(timeout=30)
    got(acker, InitTree(1, ROOT, 5, SPOUT), now=0)
    got(acker, AckTree(1, ROOT, 1), now=20)
    got(acker, InitTree(1, ROOT + 1, 5, SPOUT), now=10)
    acker.expire(30)
    assert len(acker.trees) == 2
    acker.expire(30.5)
    assert list(acker.trees) == [ROOT + 1]
    acker.expire(40.5)
    assert not acker.trees


def test_unknown_messages_raise():
    with pytest.raises(TypeError):
        got(Acker(30), Send(1))
    with pytest.raises(TypeError):
        got(Acker(30), TreeDone(1, 2))


def test_a_wake_ups_messages_at_once_give_the_verdicts_one_by_one_would():
    a, b = 0b0011, 0b0101
    messages = [
        AckTree(1, ROOT, a),  # overtakes its init
        InitTree(1, ROOT + 1, b, SPOUT + 1),
        InitTree(1, ROOT, a, SPOUT),  # ROOT completes here, mid-batch
        FailTree(1, ROOT + 2),  # unknown root: held as failed until its init or timeout
        AckTree(1, ROOT + 3, a),  # no init yet: pending
        FailTree(1, ROOT + 3),  # failed before its init: no verdict until the init
        AckTree(1, ROOT + 1, b),
    ]
    batch = Acker(timeout=30)
    out = batch.received(messages, 5.0)
    assert out == [TreeDone(SPOUT, ROOT), TreeDone(SPOUT + 1, ROOT + 1)]
    assert list(batch.trees) == [ROOT + 2, ROOT + 3] and batch.failed == {ROOT + 2, ROOT + 3}
    single = Acker(timeout=30)
    assert [v for m in messages for v in got(single, m, 5.0)] == out
    fail = Acker(timeout=30)
    fail.received([InitTree(1, ROOT, a, SPOUT), FailTree(1, ROOT)], 0.0)
    assert fail.received([AckTree(1, ROOT, a)], 0.0) == []
    assert fail.received([InitTree(1, 9, a, 0), FailTree(1, 9)], 0.0) == [TreeFailed(0, 9)]
    with pytest.raises(TypeError):
        fail.received([TreeDone(1, 2)], 0.0)
