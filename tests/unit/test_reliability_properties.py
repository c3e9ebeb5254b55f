"""Property: over random tuple trees, random failures, random delivery orders, lost tuples
and delays past the message timeout, the spout tracker + bolt anchoring + acker machines give
every message id exactly one verdict, ack only a tree whose every tuple was processed, fail
one in time only for a failure, and never let more than max.spout.pending trees fly; the
same where the spout tracks its own trees (no acker; topology.spouts.track.trees). And with
nothing lost or late, every tree is decided before its timeout."""

from __future__ import annotations

import random
from dataclasses import dataclass, field

from hypothesis import given, settings
from hypothesis import strategies as st

from squall.worker.acker import Acker
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
from squall.worker.anchoring import Anchoring
from squall.worker.spout_tracking import SpoutTracker

SPOUT, OTHER_SPOUT, ACKERS, BOLTS, TIMEOUT = 1, 2, (90, 91), (10, 11, 12), 30.0


@dataclass
class Node:
    fails: bool
    children: list[Node] = field(default_factory=list)

    def any_fails(self) -> bool:
        return self.fails or any(c.any_fails() for c in self.children)


fails = st.sampled_from([False, False, False, False, True])  # a bolt raises on one in five
nodes = st.recursive(
    st.builds(Node, fails),
    lambda kids: st.builds(Node, fails, st.lists(kids, max_size=3)),
    max_leaves=8,
)


def simulate(trees, max_pending, seed, lose, slow, own):
    """Run `trees` through the machines (messages delivered in random order, each lost with
    probability `lose`, the clock jumping most of a timeout with probability `slow`): each
    message id's verdicts as (kind, when), each one's emit time, and the spout tracker."""
    rng = random.Random(seed)
    ids = AckIds(random.Random(seed + 1))
    trackers = (SPOUT, OTHER_SPOUT) if own else ACKERS  # own: bolts ack to spout tasks
    spout = SpoutTracker(SPOUT, trackers, TIMEOUT, max_pending, ids)
    ackers = {} if own else {a: Acker(TIMEOUT) for a in ACKERS}
    bolts = {b: Anchoring(trackers, ids) for b in BOLTS}
    now = 0.0
    flying: list[tuple[int, object]] = []  # (target task, tuple node + anchors | message)
    verdicts: dict[int, list[tuple[str, float]]] = {}
    emitted_at: dict[int, float] = {}
    waiting = list(enumerate(trees))

    def spout_does(instructions):
        for instruction in instructions:
            match instruction:
                case CallAck(msg_id):
                    verdicts.setdefault(msg_id, []).append(("ack", now))
                case CallFail(msg_id):
                    verdicts.setdefault(msg_id, []).append(("fail", now))
                case InitTree():
                    flying.append((instruction.acker, instruction))
                case _:
                    raise AssertionError(instruction)

    while waiting or flying:
        if waiting and spout.can_emit and rng.random() < 0.5:
            msg_id, tree = waiting.pop(0)
            target = rng.choice(BOLTS)
            out = spout.emitted(msg_id, (target,), now)
            emitted_at[msg_id] = now
            [send] = [i for i in out if isinstance(i, Send)]
            flying.append((target, (tree, send)))
            spout_does([i for i in out if not isinstance(i, Send)])
            assert not max_pending or len(spout.pending) <= max_pending
        elif flying:
            target, item = flying.pop(rng.randrange(len(flying)))
            if rng.random() < lose:
                continue  # lost with a crashed worker: only the timeout can fail its tree
            if target in bolts:
                node, send = item
                bolt = bolts[target]
                if rng.random() < 0.5:  # a plain bolt's input, or one of a micro-batch
                    bolt.taken_one(send.roots, send.ids)
                else:
                    bolt.taken((dict(zip(send.roots, send.ids, strict=True)),))
                for child in node.children:
                    child_target = rng.choice(BOLTS)
                    [child_send] = bolt.emitted_to((child_target,))
                    flying.append((child_target, (child, child_send)))
                for message in bolt.processed(not node.fails):
                    assert isinstance(message, AckTree | FailTree)
                    flying.append((message.acker, message))
            elif target in ackers:
                for verdict in ackers[target].received([item], now):
                    assert isinstance(verdict, TreeDone | TreeFailed)
                    flying.append((verdict.spout_task, verdict))
            else:
                assert target == SPOUT  # never the other spout: its roots land on this one
                spout_does(spout.verdicts([item], now))
        if rng.random() < slow:
            now += TIMEOUT * 0.7
        else:
            now += 0.01
        spout_does(spout.tick(now))
        for acker in ackers.values():
            acker.expire(now)
    now += TIMEOUT + 1
    spout_does(spout.tick(now))
    return verdicts, emitted_at, spout


@given(
    trees=st.lists(nodes, min_size=1, max_size=8),
    max_pending=st.integers(0, 3),
    seed=st.integers(0, 2**32),
    lose=st.floats(0, 0.2),
    slow=st.floats(0, 0.2),
    own=st.booleans(),
)
@settings(max_examples=300, deadline=None)
def test_every_tree_gets_exactly_one_verdict(trees, max_pending, seed, lose, slow, own):
    """Safety: one verdict each; an ack only for a tree without a failure; a fail of a tree
    without one only by the timeout."""
    verdicts, emitted_at, spout = simulate(trees, max_pending, seed, lose, slow, own)
    assert not spout.pending and not spout.xors
    assert sorted(verdicts) == list(range(len(trees)))
    for msg_id, tree in enumerate(trees):
        [(verdict, at)] = verdicts[msg_id]
        if verdict == "ack":
            assert not tree.any_fails()
        elif not tree.any_fails():
            assert at - emitted_at[msg_id] > TIMEOUT  # lost or slow: failed by the timeout


@given(
    trees=st.lists(nodes, min_size=1, max_size=8),
    max_pending=st.integers(0, 3),
    seed=st.integers(0, 2**32),
    own=st.booleans(),
)
@settings(max_examples=200, deadline=None)
def test_without_loss_or_delay_every_tree_is_decided_before_its_timeout(
    trees, max_pending, seed, own
):
    """Liveness: nothing lost, nothing late, so no tree waits for its timeout: one without
    a failure is acked, one with a failure is failed, both before the timeout (a tracker
    that let trees time out would still pass the safety property above)."""
    verdicts, emitted_at, _ = simulate(trees, max_pending, seed, lose=0.0, slow=0.0, own=own)
    for msg_id, tree in enumerate(trees):
        [(verdict, at)] = verdicts[msg_id]
        assert verdict == ("fail" if tree.any_fails() else "ack"), (msg_id, tree)
        assert at - emitted_at[msg_id] <= TIMEOUT
