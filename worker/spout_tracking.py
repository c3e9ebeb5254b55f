"""The spout task's decisions: which emitted tuples are tracked, how many may be in flight
(topology.max.spout.pending), when one has timed out (topology.message.timeout.secs), and
that the spout hears exactly one verdict, ack or fail, per tracked message id.

Where the spout task is one of the `ackers` (topology.spouts.track.trees, squall/tree_tracking.py)
it is its own trees' acker: it keeps each tree's XOR and takes the bolts' acks and fails
itself, instead of an acker's init and verdict messages.

Pure: one method per event (`emitted`, `verdicts`, `tick`), instructions out, time passed
in, acking ids from the injected generator.
Replay is the spout's own business: it emits the message again from `fail`. The complete
latency of each acked tree (emit to verdict, both times passed in) goes to `latency`.
"""

from __future__ import annotations

from collections import OrderedDict
from collections.abc import Callable, Sequence
from typing import Any

from .acking import (
    ID_MAX,
    ID_MIN,
    AckTree,
    CallAck,
    CallFail,
    FailTree,
    InitTree,
    Send,
    TreeDone,
    TreeFailed,
    untracked,
)
from .latency import CompleteLatency

SpoutInstruction = Send | InitTree | CallAck | CallFail
_new = tuple.__new__  # a NamedTuple made without its Python-level __new__ (per tuple)


class SpoutTracker:
    def __init__(
        self,
        task: int,
        ackers: Sequence[int],
        timeout: float,
        max_pending: int,
        new_id: Callable[[], int],
        near_ackers: Sequence[int] = (),
    ) -> None:
        """`near_ackers`: ackers in this task's own worker; its roots are drawn so that one
        of them tracks each tree (the init and the verdict then never cross the network).
        A task among `ackers` tracks its own trees: its roots are drawn to land on itself."""
        self.task = task
        self.ackers = tuple(ackers)
        self.tracks_own = task in self.ackers
        if self.tracks_own:
            near_ackers = (task,)
        self.near = tuple(self.ackers.index(a) for a in near_ackers if a in self.ackers)
        self.timeout = timeout
        self.max_pending = max_pending  # 0: no limit
        self.new_id = new_id
        self.pending: OrderedDict[int, tuple[Any, float]] = OrderedDict()  # root -> (msg, at)
        self.acked_untracked: list[Any] = []
        self.xors: dict[int, int] = {}  # root -> its tree's XOR so far, when tracking its own
        self.latency = CompleteLatency()

    @property
    def can_emit(self) -> bool:
        """Whether the spout may be asked for more tuples (backpressure)."""
        return not self.max_pending or len(self.pending) < self.max_pending

    def emitted(self, msg_id: Any, targets: tuple[int, ...], now: float) -> list:
        """The spout emitted `msg_id` (None: untracked) to `targets` at `now`: a Send per
        target, and the tree's init for its acker when one tracks it."""
        ackers = self.ackers
        if msg_id is None or not targets or not ackers:
            if msg_id is not None:  # untracked: acked at the next tick (Storm's rule)
                self.acked_untracked.append(msg_id)
            return [untracked(target) for target in targets]
        root = self._root()
        acker = ackers[root % len(ackers)]  # acker_for, inline
        out: list[SpoutInstruction] = []
        xor = 0
        roots = (root,)
        for target in targets:
            edge = self.new_id()
            xor ^= edge
            out.append(_new(Send, (target, roots, (edge,))))
        self.pending[root] = (msg_id, now)
        if self.tracks_own:
            self.xors[root] = xor  # before any Send is carried out: no ack can overtake it
        else:
            out.append(_new(InitTree, (acker, root, xor, self.task)))
        return out

    def verdicts(
        self, verdicts: Sequence[TreeDone | TreeFailed | AckTree | FailTree], now: float
    ) -> list:
        """The acker verdicts that arrived in a wake-up, at `now` (the complete latency's
        end): one CallAck or CallFail per verdict on a pending root.
        A task tracking its own trees takes the bolts' AckTree and FailTree here instead:
        a tree whose XOR reaches zero is done; acks of a tree it no longer holds (timed
        out, or not its own) count for nothing, as at an acker. The kind the task does not
        take counts for nothing too: workers that started before the topology's acking
        changed (`config set topology.acker.executors`) may still send it."""
        out: list[SpoutInstruction] = []
        pending, xors, own, latencies = self.pending, self.xors, self.tracks_own, []
        verdict: Any  # read by index below: a verdict's root, an AckTree's XOR
        for verdict in verdicts:
            kind = type(verdict)
            if kind is AckTree:
                if not own:
                    continue  # stale: an acker tracks this task's trees now
                root = verdict[1]
                xor = xors.get(root)
                if xor is None:
                    continue
                xor ^= verdict[2]
                if xor:
                    xors[root] = xor
                    continue
                del xors[root]
                kind = TreeDone
            elif kind is FailTree:
                if not own or xors.pop(verdict[1], None) is None:
                    continue
                kind = TreeFailed
            elif kind is TreeDone or kind is TreeFailed:
                if own:
                    continue  # no acker tracks this task's trees: not one of its verdicts
            else:
                raise TypeError(f"a spout task takes acks and acker verdicts, not {verdict!r}")
            entry = pending.pop(verdict[1], None)
            if entry is None:
                continue
            if kind is TreeDone:
                latencies.append((now - entry[1]) * 1000)
                out.append(_new(CallAck, (entry[0],)))
            else:
                out.append(_new(CallFail, (entry[0],)))
        if latencies:
            self.latency.add_many(latencies)
        return out

    def _root(self) -> int:
        """A fresh root; with near ackers, one that a near acker tracks (acker_for)."""
        while True:
            root = self.new_id()
            if not self.near:
                return root
            n = len(self.ackers)
            if root % n not in self.near:
                root += self.near[root % len(self.near)] - root % n
            if root and ID_MIN <= root <= ID_MAX:
                return root

    def tick(self, now: float) -> list[SpoutInstruction]:
        """Time passed: the trees past the timeout failed, the untracked emits acked."""
        out: list[SpoutInstruction] = []
        while self.pending:
            root, (msg_id, emitted_at) = next(iter(self.pending.items()))
            if now - emitted_at <= self.timeout:
                break
            del self.pending[root]
            self.xors.pop(root, None)
            out.append(CallFail(msg_id))
        out.extend(CallAck(msg_id) for msg_id in self.acked_untracked)
        self.acked_untracked.clear()
        return out
