"""Storm's reliability protocol: XOR trees of tuple ids, tracked by acker tasks.

A spout tuple emitted with a message id gets a random 64-bit root. Every delivery of a
tracked tuple carries a map root -> id; a bolt that emits while processing an input anchors
the new tuple to it (the new random id is XORed into the new tuple's map for each of the
input's roots, and into the input's ack value). Acking an input sends, per root, its id XOR
everything emitted from it. The acker XORs all of that per root: it reaches zero exactly
when every tuple of the tree was acked, and then tells the spout task. A failure, or no
answer within topology.message.timeout.secs, fails the spout tuple so the spout can replay.

This module holds the protocol's vocabulary, shared by the pure machines that decide
(spout_tracking, anchoring, acker, micro_batches) and the executors that carry their
instructions out: the events they take and the instructions they give. Those made per tuple
are immutable NamedTuples, not frozen dataclasses (a frozen dataclass's __init__ sets each
field through object.__setattr__: 21% of the per-tuple CPU), equal only to their own type;
the rare ones stay frozen dataclasses.
"""

from __future__ import annotations

import os
import random
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, Final, NamedTuple

from squall.structure import ACKER

from .delivery import TupleDelivery
from .typed_tuples import equal_only_to_own_type

__all__ = ["ACKER", "AckIds", "SYSTEM_STREAMS", "acker_for"]

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


ID_BITS: Final = 63  # ids are signed ID_BITS-bit integers
ID_MIN: Final = -(1 << (ID_BITS - 1))
ID_MAX: Final = (1 << (ID_BITS - 1)) - 1


class AckIds:
    """Random non-zero signed 63-bit ids. They travel as int64 (Arrow's, Storm's longs), and
    any int64 from a peer is taken, but the ids a task draws leave the top bit's range out:
    a 63-bit int is a machine word in the compiled build (mypyc's tagged int), so the XORs,
    the acker choice and the comparisons on every tuple's ids allocate nothing; with 64 bits
    each was an operation on a Python long. A sum of ids that cancels by chance (a tree
    completed too early) stays as unlikely as it gets: 2**-63 instead of 2**-64.

    One per executor: a seeded PRNG needs no lock and no syscall per id (SystemRandom made
    one each); tests pass a `random.Random(seed)` to get the same ids every run."""

    def __init__(self, rng: random.Random | None = None) -> None:
        self._rng = rng if rng is not None else random.Random(os.urandom(16))

    def __call__(self) -> int:
        while True:
            value = self._rng.getrandbits(ID_BITS) + ID_MIN
            if value:
                return value


def acker_for(ackers: Sequence[int], root: int) -> int | None:
    """The acker task that tracks `root`; None when the topology runs no ackers."""
    return ackers[root % len(ackers)] if ackers else None


# --- events ---


@dataclass(frozen=True)
class Tick:
    """Time passed: timeouts and deadlines are checked against `now` (monotonic seconds)."""

    now: float


# --- instructions ---


class Send(NamedTuple):
    """Send the emitted payload to `target` with this acking map (empty: untracked). A
    machine gives one Send per target of the emit event, in the same order."""

    target: int
    roots: tuple[int, ...] = ()
    ids: tuple[int, ...] = ()


_UNTRACKED: dict[int, Send] = {}


def untracked(target: int) -> Send:
    """Send(target) without acking ids: immutable, so one per target is shared."""
    send = _UNTRACKED.get(target)
    if send is None:
        send = _UNTRACKED[target] = Send(target)
    return send


class InitTree(NamedTuple):
    acker: int
    root: int
    xor: int
    spout_task: int

    @property
    def target(self) -> int:
        return self.acker


class AckTree(NamedTuple):
    acker: int
    root: int
    xor: int

    @property
    def target(self) -> int:
        return self.acker


class FailTree(NamedTuple):
    acker: int
    root: int

    @property
    def target(self) -> int:
        return self.acker


class TreeDone(NamedTuple):
    """To the spout task (also the spout tracker's event): the tree of `root` completed."""

    spout_task: int
    root: int

    @property
    def target(self) -> int:
        return self.spout_task


class TreeFailed(NamedTuple):
    """To the spout task (also the spout tracker's event): the tree of `root` failed."""

    spout_task: int
    root: int

    @property
    def target(self) -> int:
        return self.spout_task


class CallAck(NamedTuple):
    msg_id: Any


class CallFail(NamedTuple):
    msg_id: Any


ProtocolMessage = InitTree | AckTree | FailTree | TreeDone | TreeFailed
PROTOCOL_TYPES = (InitTree, AckTree, FailTree, TreeDone, TreeFailed)
SYSTEM_COMPONENT = "__system"  # the source a protocol message names on the wire (Storm's)


_new = tuple.__new__  # a NamedTuple made without its Python-level __new__ (per tuple)
_STREAM_OF: dict[type, str] = {
    InitTree: ACK_INIT,
    AckTree: ACK_ACK,
    FailTree: ACK_FAIL,
    TreeDone: ACK_DONE,
    TreeFailed: ACK_FAILED,
}
_MESSAGE_OF: dict[str, type[ProtocolMessage]] = {
    stream: kind for kind, stream in _STREAM_OF.items()
}


def message_stream(message: ProtocolMessage) -> tuple[int, str, list[int]]:
    """A protocol message as (target task, system stream, values) for the wire: the values
    are the message's fields after the target, in order (the stream's SYSTEM_STREAMS)."""
    stream = _STREAM_OF.get(type(message))
    if stream is None:
        raise TypeError(f"not a protocol message: {message!r}")
    return message[0], stream, list(message[1:])  # type: ignore[index]


def message_delivery(message: ProtocolMessage) -> TupleDelivery:
    """A protocol message as a tuple on its system stream, for the wire (a message between
    tasks of one worker travels as it is). Its source is not needed by the receiver."""
    stream = _STREAM_OF.get(type(message))
    if stream is None:
        raise TypeError(f"not a protocol message: {message!r}")
    return _new(TupleDelivery, (message[0], SYSTEM_COMPONENT, 0, stream, message[1:], (), ()))


def stream_message(target: int, stream: str, values: Sequence[Any]) -> ProtocolMessage:
    """The protocol message a system-stream tuple for task `target` carries; ValueError when
    the stream is not a system stream or its values are not the stream's integers (a peer's
    frame is checked, not trusted)."""
    kind = _MESSAGE_OF.get(stream)
    if kind is None:
        raise ValueError(f"not a system stream: {stream!r}")
    if len(values) != len(kind._fields) - 1 or not all(type(v) is int for v in values):
        raise ValueError(f"{stream} carries {len(kind._fields) - 1} integers, not {values!r}")
    return _new(kind, (target, *values))  # type: ignore[no-any-return]


for _kind in PROTOCOL_TYPES:  # `target` is field 0 of each: read in C, not by a property
    _kind.target = _kind.__dict__[_kind._fields[0]]  # type: ignore[method-assign,misc]

PER_TUPLE_TYPES = (
    Send,
    *PROTOCOL_TYPES,
    CallAck,
    CallFail,
)
equal_only_to_own_type(*PER_TUPLE_TYPES)
