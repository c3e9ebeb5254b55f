"""The acker task's decisions: XOR the ids of each tuple tree and tell the spout task when
the tree completes (the XOR reaches zero after its init) or fails.

Pure: protocol messages and ticks in, TreeDone/TreeFailed out, time passed in.
"""

from __future__ import annotations

from dataclasses import dataclass

from .acking import AckerReceived, AckTree, FailTree, InitTree, Tick, TreeDone, TreeFailed

AckerEvent = AckerReceived | Tick
AckerInstruction = TreeDone | TreeFailed


@dataclass
class _Tree:
    xor: int
    spout_task: int | None  # None until the spout's init arrives (acks may overtake it)
    created: float


class Acker:
    """One acker task's pending trees. A tree older than the message timeout is forgotten
    on a tick: its spout has failed it by then."""

    def __init__(self, timeout: float) -> None:
        self.timeout = timeout
        self.trees: dict[int, _Tree] = {}

    def handle(self, event: AckerEvent) -> list[AckerInstruction]:
        match event:
            case AckerReceived(message, now):
                return self._received(message, now)
            case Tick(now):
                expired = [r for r, t in self.trees.items() if now - t.created > self.timeout]
                for root in expired:
                    del self.trees[root]
                return []
        raise TypeError(f"the acker has no event {event!r}")

    def _received(self, message: InitTree | AckTree | FailTree, now: float) -> list:
        match message:
            case InitTree(_, root, xor, spout_task):
                tree = self._tree(root, now)
                tree.xor ^= xor
                tree.spout_task = spout_task
                return self._completed(root)
            case AckTree(_, root, xor):
                self._tree(root, now).xor ^= xor
                return self._completed(root)
            case FailTree(_, root):
                tree = self.trees.pop(root, None)
                if tree is None or tree.spout_task is None:
                    return []
                return [TreeFailed(tree.spout_task, root)]
        raise TypeError(f"the acker has no message {message!r}")

    def _tree(self, root: int, now: float) -> _Tree:
        tree = self.trees.get(root)
        if tree is None:
            tree = self.trees[root] = _Tree(0, None, now)
        return tree

    def _completed(self, root: int) -> list[AckerInstruction]:
        tree = self.trees[root]
        if tree.xor == 0 and tree.spout_task is not None:
            del self.trees[root]
            return [TreeDone(tree.spout_task, root)]
        return []
