"""What travels between tasks: one tuple, or one Arrow table of tuples, for one target task.

Both carry Storm's acking map (root -> id) as two parallel tuples, `roots` and `ids`, empty
when the tuple is not tracked. A `TableDelivery` (what `emit_batch` sends) is acked as one
node of the tree, however many rows it holds. Immutable NamedTuples made per tuple (a frozen
dataclass costs several times as much to make), equal only to their own type.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, NamedTuple

import pyarrow as pa

from squall.components import NO_IDS, Tuple

from .typed_tuples import equal_only_to_own_type


class TupleDelivery(NamedTuple):
    """One tuple: `values` in the order of the stream's declared fields."""

    target: int
    component: str
    task: int
    stream: str
    values: tuple[Any, ...]
    roots: tuple[int, ...] = ()
    ids: tuple[int, ...] = ()


class TableDelivery(NamedTuple):
    """Tuples that travel as one Arrow table (columns: the stream's fields)."""

    target: int
    component: str
    task: int
    stream: str
    table: pa.Table
    roots: tuple[int, ...] = ()
    ids: tuple[int, ...] = ()

    @property
    def anchors(self) -> Mapping[int, int]:  # what its Batch keeps (a Tuple keeps the two)
        return dict(zip(self.roots, self.ids, strict=True)) if self.roots else NO_IDS


Delivery = TupleDelivery | TableDelivery
_new = tuple.__new__


def as_tuple(
    component: str,
    task: int,
    stream: str,
    fields: tuple[str, ...],
    values: tuple[Any, ...],
    roots: tuple[int, ...],
    ids: tuple[int, ...],
) -> Tuple:
    """The Tuple a bolt takes for a tuple with this routing (per tuple: made without the
    Python-level __new__, its acking map kept as the delivery's two tuples)."""
    return _new(Tuple, (component, task, stream, fields, values, roots, ids))  # type: ignore[no-any-return]


equal_only_to_own_type(TupleDelivery, TableDelivery, hashable=False)  # a table is not hashable
