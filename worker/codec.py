"""Batches of tuples on the wire, as Arrow record batches.

A delivery is `[target task, source component, source task, stream, values, roots, ids]`:
`roots` and `ids` are the tuple's acking ids (Storm's root -> id map as two lists), both
empty when the tuple is not tracked. Deliveries
bound for one worker are grouped by (source component, stream); each group becomes one Arrow
record batch whose columns are the stream's declared fields plus the routing columns, with the
component and stream in the schema metadata. A field whose values Arrow cannot hold in one
typed column (mixed types, nested oddities) travels as JSON text and is marked so.
"""

from __future__ import annotations

import json
from collections import defaultdict
from collections.abc import Callable, Iterable
from typing import Any

import pyarrow as pa

Delivery = list[Any]
FieldsOf = Callable[[str, str], tuple[str, ...]]

_ROUTING = ("__target", "__task", "__roots", "__ids")
_ROUTING_TYPES = (pa.int32(), pa.int32(), pa.list_(pa.int64()), pa.list_(pa.int64()))


class CodecError(ValueError):
    """A frame is not a squall batch."""


def _column(values: list[Any]) -> tuple[pa.Array, bool]:
    try:
        return pa.array(values), False
    except (pa.ArrowInvalid, pa.ArrowTypeError, pa.ArrowNotImplementedError, OverflowError):
        return pa.array([json.dumps(v) for v in values], type=pa.string()), True


def encode(deliveries: Iterable[Delivery], fields_of: FieldsOf) -> list[bytes]:
    groups: dict[tuple[str, str], list[Delivery]] = defaultdict(list)
    for d in deliveries:
        groups[(d[1], d[3])].append(d)
    frames = []
    for (component, stream), group in groups.items():
        fields = fields_of(component, stream)
        arrays, names, as_json = [], [], []
        for i, name in enumerate(fields):
            array, is_json = _column([d[4][i] for d in group])
            arrays.append(array)
            names.append(name)
            if is_json:
                as_json.append(name)
        for position, (name, kind) in enumerate(zip(_ROUTING, _ROUTING_TYPES, strict=True)):
            arrays.append(pa.array([d[(0, 2, 5, 6)[position]] for d in group], type=kind))
            names.append(name)
        metadata = {
            "component": component,
            "stream": stream,
            "json": json.dumps(as_json),
        }
        batch = pa.RecordBatch.from_arrays(arrays, names=names, metadata=metadata)
        sink = pa.BufferOutputStream()
        with pa.ipc.new_stream(sink, batch.schema) as writer:
            writer.write_batch(batch)
        frames.append(sink.getvalue().to_pybytes())
    return frames


def decode(frame: bytes) -> list[Delivery]:
    try:
        reader = pa.ipc.open_stream(frame)
        meta = {k.decode(): v.decode() for k, v in (reader.schema.metadata or {}).items()}
        component, stream = meta["component"], meta["stream"]
        as_json = set(json.loads(meta["json"]))
        table = reader.read_all()
    except (pa.ArrowInvalid, KeyError, ValueError, UnicodeDecodeError) as exc:
        raise CodecError(f"not a squall batch: {exc}") from exc
    names = [n for n in table.column_names if n not in _ROUTING]
    columns = [
        [json.loads(v) for v in table.column(n).to_pylist()]
        if n in as_json
        else table.column(n).to_pylist()
        for n in names
    ]
    targets, tasks, roots, ids = (table.column(n).to_pylist() for n in _ROUTING)
    rows = list(zip(*columns, strict=True)) if columns else [()] * table.num_rows
    return [
        [targets[i], component, tasks[i], stream, list(rows[i]), roots[i], ids[i]]
        for i in range(table.num_rows)
    ]
