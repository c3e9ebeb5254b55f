"""The acker task's decisions: XOR the ids of each tuple tree and tell the spout task when
the tree completes (the XOR reaches zero after its init) or fails.

Pure: protocol messages and ticks in, TreeDone/TreeFailed out, time passed in. The acker sees
three or more messages per spout tuple, so it takes a wake-up's messages as one event
(`AckerReceivedMany`) and keeps each tree as a plain list of ints, not an object.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from .acking import (
    AckerReceived,
    AckerReceivedMany,
    AckTree,
    FailTree,
    InitTree,
    Tick,
    TreeDone,
    TreeFailed,
)

AckerEvent = AckerReceived | AckerReceivedMany | Tick
AckerInstruction = TreeDone | TreeFailed

# A tree: [xor, spout task (-1 until the spout's init arrives: acks may overtake it), created]
XOR, SPOUT, CREATED = 0, 1, 2
NO_SPOUT = -1
_new = tuple.__new__  # a NamedTuple made without its Python-level __new__ (per tuple)


class Acker:
    """One acker task's pending trees. A tree older than the message timeout is forgotten
    on a tick: its spout has failed it by then."""

    def __init__(self, timeout: float) -> None:
        self.timeout = timeout
        self.trees: dict[int, list] = {}  # root -> [xor, spout task, created]

    def handle(self, event: AckerEvent) -> list[AckerInstruction]:
        match event:
            case AckerReceivedMany(messages, now):
                return self.received(messages, now)
            case AckerReceived(message, now):
                out: list[AckerInstruction] = []
                self._received(message, now, out)
                return out
            case Tick(now):
                expired = [r for r, t in self.trees.items() if now - t[CREATED] > self.timeout]
                for root in expired:
                    del self.trees[root]
                return []
        raise TypeError(f"the acker has no event {event!r}")

    def received(
        self, messages: Sequence[InitTree | AckTree | FailTree], now: float
    ) -> list[AckerInstruction]:
        """AckerReceivedMany without the event object (the executor's per-wake-up call): the
        acker's three or more messages per spout tuple, inits and acks inline."""
        out: list[AckerInstruction] = []
        trees = self.trees
        message: Any  # read by index below: an InitTree's fields, an AckTree's three
        for message in messages:
            kind = type(message)
            if kind is AckTree or kind is InitTree:
                root = message[1]
                tree = trees.get(root)
                if tree is None:
                    tree = trees[root] = [message[2], NO_SPOUT, now]
                else:
                    tree[XOR] ^= message[2]
                if kind is InitTree:
                    tree[SPOUT] = message[3]
                if tree[XOR] == 0 and tree[SPOUT] != NO_SPOUT:
                    del trees[root]
                    out.append(_new(TreeDone, (tree[SPOUT], root)))
            else:
                self._received(message, now, out)  # a fail, or not a message: raises
        return out

    def _received(
        self, message: InitTree | AckTree | FailTree, now: float, out: list[AckerInstruction]
    ) -> None:
        kind = type(message)
        if kind is AckTree:
            tree = self._tree(message.root, now)
            tree[XOR] ^= message.xor  # type: ignore[union-attr]
        elif kind is InitTree:
            tree = self._tree(message.root, now)
            tree[XOR] ^= message.xor  # type: ignore[union-attr]
            tree[SPOUT] = message.spout_task  # type: ignore[union-attr]
        elif kind is FailTree:
            failed = self.trees.pop(message.root, None)
            if failed is not None and failed[SPOUT] != NO_SPOUT:
                out.append(TreeFailed(failed[SPOUT], message.root))
            return
        else:
            raise TypeError(f"the acker has no message {message!r}")
        if tree[XOR] == 0 and tree[SPOUT] != NO_SPOUT:
            del self.trees[message.root]
            out.append(TreeDone(tree[SPOUT], message.root))

    def _tree(self, root: int, now: float) -> list:
        tree = self.trees.get(root)
        if tree is None:
            tree = self.trees[root] = [0, NO_SPOUT, now]
        return tree
