"""What travels between tasks: one tuple, or one Arrow table of tuples, for one target task.

Both carry Storm's acking map (root -> id) as two parallel tuples, `roots` and `ids`, empty
when the tuple is not tracked. A `TableDelivery` (what `emit_batch` sends) is acked as one
node of the tree, however many rows it holds.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from types import MappingProxyType
from typing import Any

import pyarrow as pa

NO_ANCHORS: Mapping[int, int] = MappingProxyType({})  # an untracked tuple's, shared


@dataclass(frozen=True)
class TupleDelivery:
    """One tuple: `values` in the order of the stream's declared fields."""

    target: int
    component: str
    task: int
    stream: str
    values: tuple[Any, ...]
    roots: tuple[int, ...] = ()
    ids: tuple[int, ...] = ()

    @property
    def anchors(self) -> Mapping[int, int]:
        return dict(zip(self.roots, self.ids, strict=True)) if self.roots else NO_ANCHORS


@dataclass(frozen=True)
class TableDelivery:
    """Tuples that travel as one Arrow table (columns: the stream's fields)."""

    target: int
    component: str
    task: int
    stream: str
    table: pa.Table
    roots: tuple[int, ...] = ()
    ids: tuple[int, ...] = ()

    @property
    def anchors(self) -> Mapping[int, int]:
        return dict(zip(self.roots, self.ids, strict=True)) if self.roots else NO_ANCHORS


Delivery = TupleDelivery | TableDelivery
