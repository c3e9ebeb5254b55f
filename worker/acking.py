"""Storm's reliability protocol: XOR trees of tuple ids, tracked by acker tasks.

A spout tuple emitted with a message id gets a random 64-bit root. Every delivery of a
tracked tuple carries a map root -> id; a bolt that emits while processing an input anchors
the new tuple to it (the new random id is XORed into the new tuple's map for each of the
input's roots, and into the input's ack value). Acking an input sends, per root, its id XOR
everything emitted from it. The acker XORs all of that per root: it reaches zero exactly
when every tuple of the tree was acked, and then tells the spout task. A failure, or no
answer within topology.message.timeout.secs, fails the spout tuple so the spout can replay.
"""

from __future__ import annotations

import random
from dataclasses import dataclass

from squall.structure import ACKER

__all__ = ["ACKER", "AckerState", "SYSTEM_STREAMS", "new_id"]

ACK_INIT = "__ack_init"  # spout -> acker: [root, xor of first edges, spout task]
ACK_ACK = "__ack_ack"  # bolt -> acker: [root, id xor emitted]
ACK_FAIL = "__ack_fail"  # bolt -> acker: [root]
ACK_DONE = "__ack_done"  # acker -> spout: [root]
ACK_FAILED = "__ack_failed"  # acker -> spout: [root]

SYSTEM_STREAMS: dict[str, tuple[str, ...]] = {
    ACK_INIT: ("root", "xor", "spout_task"),
    ACK_ACK: ("root", "xor"),
    ACK_FAIL: ("root",),
    ACK_DONE: ("root",),
    ACK_FAILED: ("root",),
}

_random = random.SystemRandom()


def new_id() -> int:
    """A random non-zero signed 64-bit id (Arrow int64, like Storm's longs)."""
    while True:
        value = _random.getrandbits(64) - (1 << 63)
        if value:
            return value


@dataclass
class _Entry:
    xor: int
    spout_task: int | None
    created: float


class AckerState:
    """One acker task's pending trees. Pure apart from the clock passed in."""

    def __init__(self) -> None:
        self.entries: dict[int, _Entry] = {}

    def _entry(self, root: int, now: float) -> _Entry:
        entry = self.entries.get(root)
        if entry is None:
            entry = self.entries[root] = _Entry(0, None, now)
        return entry

    def init(self, root: int, xor: int, spout_task: int, now: float) -> int | None:
        entry = self._entry(root, now)
        entry.xor ^= xor
        entry.spout_task = spout_task
        return self._complete(root)

    def ack(self, root: int, xor: int, now: float) -> int | None:
        self._entry(root, now).xor ^= xor
        return self._complete(root)

    def _complete(self, root: int) -> int | None:
        """The spout task to tell, if the tree of `root` is now fully acked."""
        entry = self.entries[root]
        if entry.xor == 0 and entry.spout_task is not None:
            del self.entries[root]
            return entry.spout_task
        return None

    def fail(self, root: int) -> int | None:
        entry = self.entries.pop(root, None)
        return entry.spout_task if entry else None

    def expire(self, now: float, timeout: float) -> int:
        """Forget trees older than the message timeout (their spouts fail them anyway)."""
        old = [r for r, e in self.entries.items() if now - e.created > timeout]
        for root in old:
            del self.entries[root]
        return len(old)
