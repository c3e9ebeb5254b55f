"""Protocol messages (acking.PROTOCOL_TYPES: inits, acks, fails, verdicts) on the wire.

Every tracked tuple costs its tree a few of these, and each is a handful of 64-bit integers,
`target` first. Carried as tuples on system streams they cost a TupleDelivery on the way out
and a checked stream_message on the way in, in Python, per message; here the messages of one
type bound for one worker travel as one frame of packed little-endian int64s:

    PROTOCOL_MAGIC, one type byte (the index in KINDS), then width x int64 per message

built and read in C (array, zip, map): no Python call per message. A frame whose type byte
is unknown, whose body is empty or not a whole number of messages, is a CodecError; any
int64 is a well-formed field (a target this worker does not run is dropped by Inbound).
"""

from __future__ import annotations

import sys
from array import array
from collections import defaultdict
from collections.abc import Callable, Hashable, Sequence
from functools import partial
from itertools import chain, compress, repeat
from operator import eq
from typing import Any, TypeVar

from .acking import AckTree, FailTree, InitTree, ProtocolMessage, TreeDone, TreeFailed

PROTOCOL_MAGIC = b"SQP1"  # compact_frames.MAGIC is SQK2, Arrow IPC starts 0xFF
KINDS: tuple[type, ...] = (InitTree, AckTree, FailTree, TreeDone, TreeFailed)
_HEAD = len(PROTOCOL_MAGIC) + 1
_CODE = {kind: PROTOCOL_MAGIC + bytes([i]) for i, kind in enumerate(KINDS)}
_WIDTH = {kind: len(kind._fields) for kind in KINDS}  # type: ignore[attr-defined]
_MAKE: dict[int, tuple[int, Callable[[Any], Any]]] = {
    i: (_WIDTH[kind], partial(tuple.__new__, kind)) for i, kind in enumerate(KINDS)
}
_SWAP = sys.byteorder != "little"  # the wire is little-endian, as Arrow's is in practice


T = TypeVar("T")
K = TypeVar("K", bound=Hashable)
FEW_KEYS = 8  # up to this many distinct keys, `grouped_by` makes one C pass per key


def grouped_by(items: Sequence[T], keys: Sequence[K]) -> dict[K, list[T]]:
    """`items` by their key (`keys[i]` is item i's), keys in order of first appearance and
    each group in the items' order: what a loop appending to a dict of lists gives, without
    a Python step per item when there are few keys (a send holds one or two streams and
    message types)."""
    distinct = dict.fromkeys(keys)
    if len(distinct) == 1:
        return {keys[0]: list(items)}
    if len(distinct) <= FEW_KEYS:
        return {key: list(compress(items, map(eq, keys, repeat(key)))) for key in distinct}
    out: dict[K, list[T]] = defaultdict(list)
    for item, key in zip(items, keys, strict=True):
        out[key].append(item)
    return dict(out)


class ProtocolFrameError(ValueError):
    """A frame that starts with PROTOCOL_MAGIC but is not a protocol frame."""


def encode_messages(
    messages: list[ProtocolMessage], max_bytes: int
) -> tuple[list[bytes], list[ProtocolMessage]]:
    """Frames of at most `max_bytes` for `messages` (one type per frame, in order within a
    type), and the messages that cannot go: one that does not fit alone, or a field beyond
    64 bits (a bug elsewhere: logged by the sender, not allowed to stop its thread)."""
    by_kind = grouped_by(messages, list(map(type, messages))) if messages else {}
    return encode_kinds(by_kind, max_bytes)


def encode_kinds(
    by_kind: dict[type, list[ProtocolMessage]], max_bytes: int
) -> tuple[list[bytes], list[ProtocolMessage]]:
    """`encode_messages` of messages already grouped by their type (the codec groups a send
    by type once)."""
    frames: list[bytes] = []
    unsendable: list[ProtocolMessage] = []
    for kind, group in by_kind.items():
        width = _WIDTH.get(kind)
        if width is None:
            raise TypeError(f"not a protocol message: {group[0]!r}")
        per_frame = (max_bytes - _HEAD) // (8 * width)
        if per_frame < 1:
            unsendable += group
            continue
        for start in range(0, len(group), per_frame):
            part = group[start : start + per_frame]
            try:
                body = array("q", [*chain.from_iterable(part)])  # a list: faster than an iterator
            except (OverflowError, TypeError):
                unsendable += part
                continue
            if _SWAP:
                body.byteswap()
            frames.append(_CODE[kind] + body.tobytes())
    return frames, unsendable


def decode_messages(frame: bytes) -> list[ProtocolMessage]:
    """The messages of a protocol frame (it starts with PROTOCOL_MAGIC); ProtocolFrameError
    for any other shape."""
    if len(frame) < _HEAD:
        raise ProtocolFrameError("a protocol frame has a type byte")
    made = _MAKE.get(frame[_HEAD - 1])
    if made is None:
        raise ProtocolFrameError(f"unknown protocol message type {frame[_HEAD - 1]}")
    width, make = made
    body = memoryview(frame)[_HEAD:]
    if not body or len(body) % (8 * width):
        raise ProtocolFrameError(f"a protocol frame's body is messages of {width} int64s")
    values = array("q")
    values.frombytes(body)
    if _SWAP:
        values.byteswap()
    return list(map(make, zip(*[iter(values)] * width, strict=True)))
