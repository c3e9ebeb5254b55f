"""Tuples of one (component, stream) on the wire as a compact frame: MAGIC, then one
MessagePack array [component, stream, width, routing, values].

`routing` is bytes: little-endian int64s, n targets, n source tasks, n root counts, then every
row's roots and then every row's ids (the rows' in order); `values` is n arrays of `width`
values. Columns of packed integers are built and read in C (array, zip, map) with no Python
call per row, and array() is their check: a routing number that is not a 64-bit integer
cannot be packed (the sender falls back to Arrow) and is never read as anything else.
Building and reading an Arrow IPC stream costs a fixed ~60 us per frame and then ~1.3 us a
row in Python listcomps; this costs well under a microsecond a row at any length.
MessagePack has no code execution on decode (unlike pickle), and every part is checked
(CompactFrameError otherwise).
"""

from __future__ import annotations

import sys
from array import array
from collections.abc import Iterable
from dataclasses import dataclass
from functools import partial
from itertools import chain, repeat
from typing import Any

import msgpack

from .delivery import TupleDelivery

MAGIC = b"SQK2"  # an Arrow IPC stream starts with 0xFFFFFFFF
_SWAP = sys.byteorder != "little"
_LIST_ONLY = {list}
_delivery = partial(tuple.__new__, TupleDelivery)  # TupleDelivery(...) without its __new__


class CompactFrameError(ValueError):
    """A frame that starts with MAGIC but is not a compact frame."""


def compact_frame(component: str, stream: str, group: list[TupleDelivery], width: int) -> bytes:
    """MAGIC + MessagePack; TypeError, ValueError or OverflowError when a value cannot go."""
    targets, _, tasks, _, values, roots, ids = zip(*group, strict=True)
    routing = array(  # from a list: array() of an iterator appends an item at a time
        "q",
        [
            *targets,
            *tasks,
            *map(len, roots),
            *chain.from_iterable(roots),
            *chain.from_iterable(ids),
        ],
    )
    if _SWAP:
        routing.byteswap()
    packed = [component, stream, width, routing.tobytes(), values]
    return MAGIC + msgpack.packb(packed, use_bin_type=True)


@dataclass(frozen=True)
class CompactRows:
    """A compact frame's rows, checked and kept as the columns they came in: the receiving
    worker hands them to its tasks as Tuples straight from the columns (Inbound.deliver_rows,
    no TupleDelivery per row), or as TupleDeliveries where it must look at each one."""

    component: str
    stream: str
    values: list[list[Any]]
    numbers: array  # the routing: targets, source tasks, root counts, roots, ids

    @property
    def targets(self) -> array:
        return self.numbers[: len(self.values)]

    @property
    def tasks(self) -> array:
        n = len(self.values)
        return self.numbers[n : 2 * n]

    def anchors(self) -> tuple[Iterable[tuple[int, ...]], Iterable[tuple[int, ...]]]:
        """Each row's roots and ids (iterables made afresh on each call)."""
        n = len(self.values)
        counts = self.numbers[2 * n : 3 * n]
        return _anchor_columns(self.numbers[3 * n :], counts, sum(counts))

    def deliveries(self) -> list[TupleDelivery]:
        n = len(self.values)
        roots, ids = self.anchors()
        rows = zip(
            self.targets,
            repeat(self.component, n),
            self.tasks,
            repeat(self.stream, n),
            map(tuple, self.values),
            roots,
            ids,
            strict=True,
        )
        return list(map(_delivery, rows))


def compact_deliveries(frame: bytes) -> list[TupleDelivery]:
    return compact_rows(frame).deliveries()


def compact_rows(frame: bytes) -> CompactRows:
    try:
        head = msgpack.unpackb(
            memoryview(frame)[len(MAGIC) :], raw=False, strict_map_key=False, timestamp=0
        )
        component, stream, width, routing, values = head
    except (ValueError, TypeError, msgpack.UnpackException) as exc:
        raise CompactFrameError(f"not a compact squall frame: {exc}") from exc
    if (
        type(component) is not str
        or type(stream) is not str
        or type(width) is not int
        or type(values) is not list
    ):
        raise CompactFrameError("a compact frame is [component, stream, width, routing, values]")
    n = len(values)
    if n and (set(map(type, values)) != _LIST_ONLY or set(map(len, values)) != {width}):
        raise CompactFrameError(f"a compact row's values must be a list of {width}")
    if type(routing) is not bytes or len(routing) % 8:
        raise CompactFrameError("a compact frame's routing is int64s")
    numbers = array("q")
    numbers.frombytes(routing)
    if _SWAP:
        numbers.byteswap()
    counts = numbers[2 * n : 3 * n]
    if len(numbers) != 3 * n + 2 * sum(counts) or (n and min(counts) < 0):
        raise CompactFrameError("a compact frame's routing must be one id per root")
    return CompactRows(component, stream, values, numbers)


def _anchor_columns(anchors: array, counts: array, anchored: int) -> tuple[Any, Any]:
    """Each row's roots and ids as tuples: in C when every row has as many roots (most
    frames: all tracked by one tree, or none), else row by row."""
    n = len(counts)
    if not anchored:
        return repeat((), n), repeat((), n)
    roots, ids = anchors[:anchored], anchors[anchored:]
    k = anchored // n
    if k * n == anchored and min(counts) == k:  # as many each: sum and min say so
        if k == 1:
            return zip(roots), zip(ids)  # noqa: B905  # one column: nothing to be uneven
        return zip(*[iter(roots)] * k, strict=True), zip(*[iter(ids)] * k, strict=True)
    row_roots, row_ids, start = [], [], 0
    for count in counts:
        row_roots.append(tuple(roots[start : start + count]))
        row_ids.append(tuple(ids[start : start + count]))
        start += count
    return row_roots, row_ids
