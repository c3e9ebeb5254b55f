"""A spout task that tracks its own tuple trees (topology.spouts.track.trees): the tracker's
decisions, and which tasks a topology's bolts ack to (squall/tree_tracking.py)."""

from __future__ import annotations

import random

import pytest

from squall.structure import ACKER, ComponentInfo, TopologyStructure
from squall.tree_tracking import tree_trackers
from squall.worker.acking import (
    AckIds,
    AckTree,
    CallAck,
    CallFail,
    FailTree,
    InitTree,
    Send,
    TreeDone,
    TreeFailed,
)
from squall.worker.spout_tracking import SpoutTracker

SPOUTS = (3, 5, 8)  # three spout tasks; bolts ack to SPOUTS[root % 3]


def tracker(task: int = 5, max_pending: int = 0) -> SpoutTracker:
    return SpoutTracker(task, SPOUTS, 30.0, max_pending, AckIds(random.Random(7)))


def test_its_roots_land_on_itself_and_no_init_leaves_it():
    spout = tracker()
    for msg in range(200):
        out = spout.emitted(msg, (10, 11), now=1.0)
        assert [type(i) for i in out] == [Send, Send]  # no InitTree: nothing to tell an acker
        root = out[0].roots[0]
        assert SPOUTS[root % len(SPOUTS)] == 5
        assert spout.xors[root] == out[0].ids[0] ^ out[1].ids[0]
    assert len(spout.pending) == len(spout.xors) == 200


def test_acks_that_cancel_the_tree_call_ack_once_with_its_latency():
    spout = tracker()
    [a, b] = spout.emitted("m", (10, 11), now=1.0)
    root, bolt_a_emitted = a.roots[0], 12345  # bolt A anchored a child to its input
    acks = [AckTree(5, root, a.ids[0] ^ bolt_a_emitted), AckTree(5, root, b.ids[0])]
    assert spout.verdicts(acks, now=1.5) == []  # the child is not acked yet
    assert spout.xors[root] == bolt_a_emitted
    assert spout.verdicts([AckTree(5, root, bolt_a_emitted)], now=1.75) == [CallAck("m")]
    assert not spout.pending and not spout.xors
    assert spout.latency.count == 1
    assert spout.verdicts([AckTree(5, root, 1)], now=2.0) == []  # a late ack: nothing


def test_a_fail_fails_the_tree_and_a_stray_ack_or_fail_counts_for_nothing():
    spout = tracker()
    [send] = spout.emitted("m", (10,), now=1.0)
    root = send.roots[0]
    stray = [AckTree(5, root + 3, 1), FailTree(5, root + 3)]  # not a tree of this task
    assert spout.verdicts([*stray, FailTree(5, root)], now=2.0) == [CallFail("m")]
    assert not spout.pending and not spout.xors
    assert spout.verdicts([AckTree(5, root, send.ids[0])], now=2.5) == []


def test_a_timed_out_tree_is_failed_and_forgotten():
    spout = tracker()
    [send] = spout.emitted("m", (10,), now=1.0)
    assert spout.tick(now=40.0) == [CallFail("m")]
    assert not spout.xors
    assert spout.verdicts([AckTree(5, send.roots[0], send.ids[0])], now=41.0) == []


def test_the_other_modes_messages_count_for_nothing_and_anything_else_is_a_bug():
    """Workers started before `config set topology.acker.executors` may send either kind."""
    spout = tracker()
    [send] = spout.emitted("m", (10,), now=1.0)
    root = send.roots[0]
    assert spout.verdicts([TreeDone(5, root), TreeFailed(5, root)], now=1.5) == []
    assert root in spout.pending and root in spout.xors
    with_ackers = SpoutTracker(5, (90,), 30.0, 0, AckIds(random.Random(7)))
    [_, init] = with_ackers.emitted("m", (10,), now=1.0)
    assert type(init) is InitTree and not with_ackers.xors
    stray = [AckTree(5, init.root, init.xor), FailTree(5, init.root)]
    assert with_ackers.verdicts(stray, now=1.5) == []
    assert with_ackers.verdicts([TreeDone(5, init.root)], now=2.0) == [CallAck("m")]
    for spout in (tracker(), with_ackers):
        with pytest.raises(TypeError, match="acks and acker verdicts"):
            spout.verdicts([init], now=2.0)


def test_max_spout_pending_counts_its_own_trees():
    spout = tracker(max_pending=1)
    [send] = spout.emitted("m", (10,), now=1.0)
    assert not spout.can_emit
    spout.verdicts([AckTree(5, send.roots[0], send.ids[0])], now=1.1)
    assert spout.can_emit


def component(name: str, kind: str) -> ComponentInfo:
    return ComponentInfo(name, kind, "m", "C", {}, 1, (), {"default": ("x",)}, {})


STRUCTURE = TopologyStructure({"s": component("s", "spout"), "b": component("b", "bolt")})
TASKS = {2: "b", 3: "s", 4: "s"}
WITH_ACKER = {1: ACKER, **TASKS}


@pytest.mark.parametrize(
    ("conf", "tasks", "trackers"),
    [
        ({}, TASKS, [3, 4]),  # the default: spouts track
        ({"topology.spouts.track.trees": True, "topology.acker.executors": 2}, TASKS, [3, 4]),
        ({"topology.spouts.track.trees": True, "topology.acker.executors": 0}, TASKS, []),
        ({"topology.spouts.track.trees": False, "topology.acker.executors": 1}, WITH_ACKER, [1]),
        ({"topology.spouts.track.trees": False, "topology.acker.executors": 0}, TASKS, []),
        ({}, WITH_ACKER, [1]),  # submitted before spouts tracked: its conf lacks the key
    ],
)
def test_who_bolts_ack_to(conf, tasks, trackers):
    assert tree_trackers(conf, STRUCTURE, tasks) == trackers


def test_a_spout_class_declared_a_bolt_is_refused_and_the_reverse():
    """A foreign client's map could name a Spout class among bolts: it would run as a spout
    whose roots no bolt acks to (only declared spouts track trees)."""
    from squall import Bolt, Spout
    from squall.components import SparkBolt, TaskContext
    from squall.worker.executor_factory import make_executor

    class S(Spout):
        def next_tuple(self):
            return False

    class B(Bolt):
        def process(self, tup):
            pass

    class Sparky(SparkBolt):
        pass

    for name, component, message in (
        ("b", S(), "b is declared a bolt, and its class is a Spout"),
        ("s", B(), "s is declared a spout, and its class is not a Spout"),
        ("s", Sparky(), "s is declared a spout, and its class is not a Spout"),
    ):
        context = TaskContext("t", name, 3, (3,), "/nonexistent")
        with pytest.raises(ValueError, match=message):
            make_executor(STRUCTURE, component, context, {}, None)
