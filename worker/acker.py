"""The acker task's decisions: XOR the ids of each tuple tree and tell the spout task when
the tree completes (the XOR reaches zero after its init) or fails.

Pure: protocol messages in (`received`), TreeDone/TreeFailed out, time passed in; `expire`
forgets trees past the timeout. The acker sees three or more messages per spout tuple, so it
takes a wake-up's messages at once and keeps each tree as a plain list of ints, not an
object.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from .acking import AckTree, FailTree, InitTree, TreeDone, TreeFailed

AckerInstruction = TreeDone | TreeFailed

# A tree: [xor, spout task (-1 until the spout's init arrives: acks may overtake it), created]
XOR, SPOUT, CREATED = 0, 1, 2
NO_SPOUT = -1
_new = tuple.__new__  # a NamedTuple made without its Python-level __new__ (per tuple)


class Acker:
    """One acker task's pending trees. A tree older than the message timeout is forgotten
    on a tick: its spout has failed it by then. A fail that overtakes its tree's init is
    kept and told to the spout when the init comes (as Storm's Acker does): forgotten, the
    tree would wait for its timeout."""

    def __init__(self, timeout: float) -> None:
        self.timeout = timeout
        self.trees: dict[int, list] = {}  # root -> [xor, spout task, created]
        self.failed: set[int] = set()  # roots of `trees` failed before their init came

    def expire(self, now: float) -> None:
        """Forget the trees older than the message timeout (their spouts failed them)."""
        timeout = self.timeout
        expired = [r for r, t in self.trees.items() if now - t[CREATED] > timeout]
        for root in expired:
            del self.trees[root]
            self.failed.discard(root)

    def received(
        self, messages: Sequence[InitTree | AckTree | FailTree], now: float
    ) -> list[AckerInstruction]:
        """A wake-up's messages at `now` (the acker's three or more per spout tuple): the
        verdicts on the trees they complete or fail; TypeError for what is not a message."""
        out: list[AckerInstruction] = []
        trees, failed = self.trees, self.failed
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
                    if failed and root in failed:  # its fail came first: failed now
                        failed.discard(root)
                        del trees[root]
                        out.append(_new(TreeFailed, (message[3], root)))
                        continue
                if tree[XOR] == 0 and tree[SPOUT] != NO_SPOUT:
                    del trees[root]
                    out.append(_new(TreeDone, (tree[SPOUT], root)))
            elif kind is FailTree:
                root = message[1]
                tree = trees.get(root)
                if tree is not None and tree[SPOUT] != NO_SPOUT:
                    del trees[root]
                    out.append(_new(TreeFailed, (tree[SPOUT], root)))
                elif root not in failed:  # before its init (Storm's case too): the spout
                    if tree is None:  # hears of it when the init comes, or times it out
                        trees[root] = [0, NO_SPOUT, now]
                    failed.add(root)
            else:
                raise TypeError(f"the acker has no message {message!r}")
        return out
