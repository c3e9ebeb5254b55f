"""A bolt's acking decisions (Storm's BasicBolt): everything emitted while inputs are being
processed is anchored to them, and each input is acked when the user code returns or failed
when it raises.

Anchoring: a root carried by an odd number of the inputs anchors the new tuple (a root on
two inputs of one micro-batch cancels out, as XOR does); every emit gets a fresh edge id,
XORed into the running value `emitted`. The ack of an input sends, per root, its id XOR
`emitted`. A table of tuples is one input, anchored and acked whole.

Pure: one method per event (`taken` or `taken_one`, `emitted_to`, `processed`),
instructions out, acking ids from the injected generator.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable, Mapping, Sequence

from .acking import AckTree, FailTree, Send, acker_for, untracked

AnchoringInstruction = Send | AckTree | FailTree
_new = tuple.__new__  # a NamedTuple made without its Python-level __new__ (per tuple)


class Anchoring:
    """The acking state of one bolt task: the inputs being processed, as one flat list of
    (root, id) pairs over all of them, in two parallel tuples (a Tuple's `roots` and
    `root_ids`, taken as they are: nothing made per input)."""

    def __init__(self, ackers: Sequence[int], new_id: Callable[[], int]) -> None:
        self.ackers = tuple(ackers)
        self.new_id = new_id
        self.input_roots: tuple[int, ...] = ()  # per input, per root of it: the root ...
        self.input_ids: tuple[int, ...] = ()  # ... and the input's id in its tree
        self.roots: tuple[int, ...] = ()  # what the next emit is anchored to
        self.emitted = 0  # XOR of the edge ids emitted from the current inputs

    def taken(self, anchors: tuple[Mapping[int, int], ...]) -> None:
        if len(anchors) == 1:
            self.taken_one(tuple(anchors[0]), tuple(anchors[0].values()))
            return
        self.input_roots = tuple(root for ids in anchors for root in ids)
        self.input_ids = tuple(value for ids in anchors for value in ids.values())
        parity = Counter(self.input_roots)
        self.roots = tuple(root for root, n in parity.items() if n % 2)
        self.emitted = 0

    def taken_one(self, roots: tuple[int, ...], ids: tuple[int, ...]) -> None:
        """One input (a plain bolt's): its roots, each once, anchor what it emits."""
        self.input_roots = self.roots = roots
        self.input_ids = ids
        self.emitted = 0

    def processed(self, ok: bool) -> list[AnchoringInstruction]:
        """The acks of the inputs taken (`ok`), else their fails; emits outside an input are
        untracked. The acks are made here, not in a method of their own: this runs for every
        input of every bolt, and a Python call was a twentieth of its path."""
        ackers, emitted, roots = self.ackers, self.emitted, self.input_roots
        self.input_roots = self.roots = ()
        ids, self.input_ids = self.input_ids, ()
        if not ok:
            return [
                FailTree(acker, root)
                for root in roots
                if (acker := acker_for(ackers, root)) is not None
            ]
        if not ackers:
            return []
        n = len(ackers)  # acker_for, inline
        if len(roots) == 1:  # one input of one tree: most tuples
            root = roots[0]
            return [_new(AckTree, (ackers[root % n], root, ids[0] ^ emitted))]
        return [
            _new(AckTree, (ackers[root % n], root, value ^ emitted))
            for root, value in zip(roots, ids, strict=True)
        ]

    def emitted_to(self, targets: tuple[int, ...]) -> list[AnchoringInstruction]:
        if not self.input_roots:  # untracked inputs (or none): untracked output
            return [untracked(target) for target in targets]
        out: list[AnchoringInstruction] = []
        roots, new_id, emitted = self.roots, self.new_id, self.emitted
        one = len(roots) == 1
        for target in targets:
            edge = new_id()
            emitted ^= edge
            out.append(_new(Send, (target, roots, (edge,) if one else (edge,) * len(roots))))
        self.emitted = emitted
        return out
