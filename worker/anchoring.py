"""A bolt's acking decisions (Storm's BasicBolt): everything emitted while inputs are being
processed is anchored to them, and each input is acked when the user code returns or failed
when it raises.

Anchoring: a root carried by an odd number of the inputs anchors the new tuple (a root on
two inputs of one micro-batch cancels out, as XOR does); every emit gets a fresh edge id,
XORed into the running value `emitted`. The ack of an input sends, per root, its id XOR
`emitted`. A table of tuples is one input, anchored and acked whole.

Pure: events in, instructions out, acking ids from the injected generator.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable, Mapping, Sequence

from .acking import (
    AckTree,
    BoltEmitted,
    FailTree,
    InputsProcessed,
    InputsTaken,
    Send,
    acker_for,
    untracked,
)

AnchoringEvent = InputsTaken | BoltEmitted | InputsProcessed
AnchoringInstruction = Send | AckTree | FailTree
_new = tuple.__new__  # a NamedTuple made without its Python-level __new__ (per tuple)


class Anchoring:
    def __init__(self, ackers: Sequence[int], new_id: Callable[[], int]) -> None:
        self.ackers = tuple(ackers)
        self.new_id = new_id
        self.inputs: tuple[Mapping[int, int], ...] = ()
        self.roots: tuple[int, ...] = ()  # what the next emit is anchored to
        self.emitted = 0  # XOR of the edge ids emitted from the current inputs

    def handle(self, event: AnchoringEvent) -> list[AnchoringInstruction]:
        match event:
            case InputsTaken(anchors):
                self.taken(anchors)
                return []
            case BoltEmitted(targets):
                return self.emitted_to(targets)
            case InputsProcessed(ok):
                return self.processed(ok)
        raise TypeError(f"bolt anchoring has no event {event!r}")

    # One method per event, for the executor's per-tuple calls (no event object, no match).

    def taken(self, anchors: tuple[Mapping[int, int], ...]) -> None:
        self.inputs = anchors
        if len(anchors) == 1:  # one input (a plain bolt): its roots, each once
            self.roots = tuple(anchors[0])
        else:
            parity = Counter(root for ids in anchors for root in ids)
            self.roots = tuple(root for root, n in parity.items() if n % 2)
        self.emitted = 0

    def processed(self, ok: bool) -> list[AnchoringInstruction]:
        out = self._acks() if ok else self._fails()
        self.inputs, self.roots = (), ()  # emits outside a processing: untracked
        return out

    def emitted_to(self, targets: tuple[int, ...]) -> list[AnchoringInstruction]:
        if not any(self.inputs):  # untracked inputs (or none): untracked output
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

    def _acks(self) -> list[AnchoringInstruction]:
        ackers, emitted = self.ackers, self.emitted
        if not ackers:
            return []
        n = len(ackers)  # acker_for, inline: this runs for every input of every bolt
        inputs = self.inputs
        if len(inputs) == 1 and len(inputs[0]) == 1:  # one input of one tree: most tuples
            ((root, value),) = inputs[0].items()
            return [_new(AckTree, (ackers[root % n], root, value ^ emitted))]
        return [
            _new(AckTree, (ackers[root % n], root, value ^ emitted))
            for ids in self.inputs
            for root, value in ids.items()
        ]

    def _fails(self) -> list[AnchoringInstruction]:
        return [
            FailTree(acker, root)
            for ids in self.inputs
            for root in ids
            if (acker := acker_for(self.ackers, root)) is not None
        ]
