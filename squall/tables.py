"""Tuples as Arrow tables: what a component emits with `emit_batch`, checked against the
stream's declared fields, and what a SparkBolt's micro-batch is built from.

A column Arrow cannot type (mixed Python types, odd nesting) raises TableError; the caller
decides the fallback, so one odd value never loses a batch silently.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import pyarrow as pa

ARROW_ERRORS = (pa.ArrowInvalid, pa.ArrowTypeError, pa.ArrowNotImplementedError, OverflowError)


class TableError(ValueError):
    """Emitted columns do not fit the stream's declared fields, or do not fit Arrow."""


def as_table(columns: Any, fields: Sequence[str], what: str) -> pa.Table:
    """`columns` (Table, RecordBatch or dict of field -> values) as a Table whose column names
    are `fields`. A Table's columns are taken by position, like a tuple's values: a Spark
    result's `count` column lands in whatever the bolt declared for it."""
    fields = list(fields)
    if isinstance(columns, dict):
        if set(columns) != set(fields):
            raise TableError(f"{what} declares fields {fields}, not {sorted(columns)}")
        try:
            return pa.table({f: columns[f] for f in fields})
        except ARROW_ERRORS as exc:
            raise TableError(f"{what}: columns Arrow cannot hold: {exc}") from exc
    if isinstance(columns, pa.RecordBatch):
        columns = pa.Table.from_batches([columns])
    if not isinstance(columns, pa.Table):
        raise TableError(f"{what}: emit_batch takes a pyarrow Table, RecordBatch or dict")
    if columns.num_columns != len(fields):
        raise TableError(
            f"{what} emits {columns.num_columns} columns, which declares "
            f"{len(fields)} fields {fields}"
        )
    return columns if columns.column_names == fields else columns.rename_columns(fields)


def rows_table(fields: Sequence[str], rows: Sequence[Sequence[Any]]) -> pa.Table:
    try:
        return pa.table({f: [row[i] for row in rows] for i, f in enumerate(fields)})
    except ARROW_ERRORS as exc:
        raise TableError(f"rows Arrow cannot type: {exc}") from exc


def concat(tables: Sequence[pa.Table]) -> pa.Table:
    """One table of many with the same fields; types are unified where Arrow can (string
    and large_string, a null column and a typed one)."""
    if len(tables) == 1:
        return tables[0]
    try:
        return pa.concat_tables(tables, promote_options="permissive")
    except ARROW_ERRORS as exc:
        raise TableError(f"tables of different types: {exc}") from exc
