"""Deliveries on the wire, in frames: Arrow IPC streams of one record batch, compact frames of
tuples and frames of protocol messages.

TupleDeliveries bound for one worker are grouped by (source component, stream); each group
becomes one frame whose columns are the stream's declared fields plus the routing columns, with
the component and stream in the schema metadata. A field whose values Arrow cannot hold in one
typed column (mixed types, nested oddities) travels as JSON text and is marked so.

A TableDelivery (what `emit_batch` sends) is already a table of the stream's fields: it
travels as it is, one frame each, with its routing in the schema metadata.

Tuples travel as a compact frame instead (compact_frames.py: MessagePack values and packed
int64 routing) whenever MessagePack can hold their values, whatever their number: Arrow's
fixed ~60 us a frame and its ~1.3 us a row of Python listcomps (to build the columns and to
read rows back) cost more at every length measured (10 to 2048 rows, bench/RESULTS.md).
Values MessagePack cannot hold (ints beyond 64 bits, sets, objects) fall back to Arrow.

Protocol messages (acks, inits, verdicts) travel as frames of their own (protocol_frames.py).

A status frame carries a worker's backpressure status: STATUS_MAGIC, then MessagePack
[host:port, its congested tasks, [[task, load], ...] of its tasks where it shares them];
`decode` checks it as strictly as any frame.
"""

from __future__ import annotations

import json
import operator
from collections.abc import Callable, Iterable
from typing import Any

import msgpack
import pyarrow as pa

from .acking import PROTOCOL_TYPES, ProtocolMessage
from .backpressure import BackpressureStatus
from .compact_frames import (
    MAGIC,
    CompactFrameError,
    CompactRows,
    compact_frame,
    compact_rows,
)
from .delivery import Delivery, TableDelivery, TupleDelivery
from .protocol_frames import (
    PROTOCOL_MAGIC,
    ProtocolFrameError,
    decode_messages,
    encode_kinds,
    grouped_by,
)

FieldsOf = Callable[[str, str], tuple[str, ...]]

_ROUTING = ("__target", "__task", "__roots", "__ids")
_ROUTING_TYPES = (pa.int32(), pa.int32(), pa.list_(pa.int64()), pa.list_(pa.int64()))


# Given, so that pyarrow does not read its legacy-format variables from the environment for
# every frame (a third of a small frame's cost)
_WRITE_OPTIONS = pa.ipc.IpcWriteOptions()


class CodecError(ValueError):
    """A frame is not a squall frame."""


_PROTOCOL = frozenset(PROTOCOL_TYPES)
_COMPONENT, _STREAM = operator.itemgetter(1), operator.itemgetter(3)  # of a TupleDelivery
_new = tuple.__new__


def _column(values: list[Any]) -> tuple[pa.Array, bool]:
    try:
        return pa.array(values), False
    except (
        pa.ArrowInvalid,
        pa.ArrowTypeError,
        pa.ArrowNotImplementedError,
        OverflowError,
        UnicodeEncodeError,  # a lone surrogate: JSON escapes it
    ):
        return pa.array([json.dumps(v) for v in values], type=pa.string()), True


def _frame(table: pa.Table, metadata: dict[str, str]) -> bytes:
    table = table.replace_schema_metadata(metadata)
    sink = pa.BufferOutputStream()
    with pa.ipc.new_stream(sink, table.schema, options=_WRITE_OPTIONS) as writer:
        writer.write_table(table)
    return sink.getvalue().to_pybytes()


def encode(deliveries: Iterable[Delivery | ProtocolMessage], fields_of: FieldsOf) -> list[bytes]:
    tables, groups, messages = _grouped(deliveries)
    frames = encode_kinds(messages, 1 << 62)[0]
    frames += [_table_frame(d) for d in tables]
    for (component, stream), group in groups.items():
        frames.append(_tuples_frame(component, stream, group, fields_of(component, stream)))
    return frames


def encode_bounded(
    deliveries: Iterable[Delivery | ProtocolMessage], fields_of: FieldsOf, max_bytes: int
) -> tuple[list[bytes], list[Delivery | ProtocolMessage]]:
    """The frames of `deliveries`, none larger than `max_bytes`, and the deliveries that
    cannot fit even alone. A receiver drops a larger frame and disconnects its sender
    (ZeroMQ's MAXMSGSIZE), so a group that is too big is split in halves until it fits
    rather than sent to be lost with everything else in it. Protocol messages go first, in
    frames of their own (protocol_frames.py)."""
    tables, groups, messages = _grouped(deliveries)
    frames, unsendable = encode_kinds(messages, max_bytes)
    too_large: list[Delivery | ProtocolMessage] = list(unsendable)
    for d in tables:
        frame = _table_frame(d)
        if len(frame) <= max_bytes:
            frames.append(frame)
        else:
            too_large.append(d)
    for (component, stream), group in groups.items():
        fields = fields_of(component, stream)
        todo = [group]
        while todo:
            part = todo.pop()
            frame = _tuples_frame(component, stream, part, fields)
            if len(frame) <= max_bytes:
                frames.append(frame)
            elif len(part) == 1:
                too_large.append(part[0])
            else:
                half = len(part) // 2
                todo += [part[half:], part[:half]]
    return frames, too_large


def _grouped(
    deliveries: Iterable[Delivery | ProtocolMessage],
) -> tuple[
    list[TableDelivery],
    dict[tuple[str, str], list[TupleDelivery]],
    dict[type, list[ProtocolMessage]],
]:
    """Tables, tuples by (component, stream) and protocol messages by type, each in its
    order; TypeError for anything else."""
    items = deliveries if type(deliveries) is list else list(deliveries)
    by_kind = grouped_by(items, list(map(type, items))) if items else {}
    tuples: list[TupleDelivery] = by_kind.pop(TupleDelivery, [])  # type: ignore[assignment]
    tables: list[TableDelivery] = by_kind.pop(TableDelivery, [])  # type: ignore[assignment]
    for kind, group in by_kind.items():
        if kind not in _PROTOCOL:
            raise TypeError(f"not a delivery: {group[0]!r}")
    messages: dict[type, list[ProtocolMessage]] = by_kind  # type: ignore[assignment]
    return tables, _by_stream(tuples), messages


def _by_stream(tuples: list[TupleDelivery]) -> dict[tuple[str, str], list[TupleDelivery]]:
    """Tuples by (component, stream), in order. Most sends hold one stream of one component:
    two sets of the same few strings say so without a key tuple made and hashed per tuple."""
    if not tuples:
        return {}
    if len(set(map(_COMPONENT, tuples))) == 1 and len(set(map(_STREAM, tuples))) == 1:
        first = tuples[0]
        return {(first.component, first.stream): tuples}
    keys = list(zip(map(_COMPONENT, tuples), map(_STREAM, tuples), strict=True))
    return grouped_by(tuples, keys)


def _table_frame(d: TableDelivery) -> bytes:
    routing = {"target": d.target, "task": d.task, "roots": d.roots, "ids": d.ids}
    meta = {"component": d.component, "stream": d.stream, "table": json.dumps(routing)}
    return _frame(d.table, meta)


def _tuples_frame(
    component: str, stream: str, group: list[TupleDelivery], fields: tuple[str, ...]
) -> bytes:
    try:
        return compact_frame(component, stream, group, len(fields))
    except (TypeError, ValueError, OverflowError):
        # a value MessagePack cannot hold: Arrow (with JSON where needed) can
        return _arrow_tuples_frame(component, stream, group, fields)


def _arrow_tuples_frame(
    component: str, stream: str, group: list[TupleDelivery], fields: tuple[str, ...]
) -> bytes:
    arrays, names, as_json = [], [], []
    for i, name in enumerate(fields):
        array, is_json = _column([d.values[i] for d in group])
        arrays.append(array)
        names.append(name)
        if is_json:
            as_json.append(name)
    routing = (
        [d.target for d in group],
        [d.task for d in group],
        [list(d.roots) for d in group],
        [list(d.ids) for d in group],
    )
    for name, kind, values in zip(_ROUTING, _ROUTING_TYPES, routing, strict=True):
        arrays.append(pa.array(values, type=kind))
        names.append(name)
    metadata = {"component": component, "stream": stream, "json": json.dumps(as_json)}
    return _frame(pa.Table.from_arrays(arrays, names=names), metadata)


MAX_STATUS_WORKER = 300  # characters of a status's host:port
MAX_STATUS_TASKS = 100_000  # tasks named in a status: a worker's tasks
MAX_LOAD = 2.0  # backpressure.task_load's highest
STATUS_MAGIC = b"SQS1"  # compact_frames.MAGIC is SQK2, protocol frames SQP1, Arrow IPC 0xFF


def encode_status(status: BackpressureStatus) -> bytes:
    """STATUS_MAGIC + MessagePack [worker, congested tasks, [[task, load], ...]]: a worker
    sends one every check interval, and an Arrow frame cost 300 us to build."""
    loads = [[task, round(load, 3)] for task, load in status.loads]
    return STATUS_MAGIC + msgpack.packb([status.worker, sorted(status.tasks), loads])


def _status(frame: bytes) -> BackpressureStatus:
    try:
        body = msgpack.unpackb(memoryview(frame)[len(STATUS_MAGIC) :], raw=False)
    except (ValueError, TypeError, msgpack.UnpackException) as exc:
        raise CodecError(f"not a status frame: {exc}") from exc
    if not (isinstance(body, list) and len(body) == 3):
        raise CodecError("a status frame holds [worker, tasks, loads]")
    worker, tasks, loads = body
    if type(worker) is not str or not worker or len(worker) > MAX_STATUS_WORKER:
        raise CodecError("a backpressure status names its worker (host:port)")
    if not isinstance(tasks, list) or len(tasks) > MAX_STATUS_TASKS:
        raise CodecError("a backpressure status's tasks are a list")
    if any(type(task) is not int or task < 0 for task in tasks):
        raise CodecError("a backpressure status names tasks by non-negative ids")
    return BackpressureStatus(worker, frozenset(tasks), _loads(loads))


def _loads(pairs: Any) -> tuple[tuple[int, float], ...]:
    """A status's (task, load) pairs: a task a non-negative int and a load a number from 0
    to MAX_LOAD."""
    if not isinstance(pairs, list) or len(pairs) > MAX_STATUS_TASKS:
        raise CodecError("a backpressure status's loads are a list of [task, load]")
    loads: list[tuple[int, float]] = []
    for pair in pairs:
        if not (isinstance(pair, list) and len(pair) == 2):
            raise CodecError("a backpressure status's loads are a list of [task, load]")
        task, load = pair
        if type(task) is not int or task < 0:
            raise CodecError("a backpressure status names tasks by non-negative ids")
        if type(load) not in (int, float) or not 0 <= load <= MAX_LOAD:
            raise CodecError(f"a task's load is a number from 0 to {MAX_LOAD}")
        loads.append((task, float(load)))
    return tuple(loads)


def decode(frame: bytes) -> list[Any]:
    """The deliveries of a frame, the protocol messages of a protocol frame, or the one
    backpressure status of a status frame."""
    decoded = decode_received(frame)
    return decoded.deliveries() if isinstance(decoded, CompactRows) else decoded


def decode_received(frame: bytes) -> CompactRows | list[Any]:
    """What a receiving worker takes: a compact frame's rows as its columns (Inbound hands
    them over without a TupleDelivery each), any other frame as `decode` gives it."""
    head = frame[: len(MAGIC)]
    if head == MAGIC:
        try:
            return compact_rows(frame)
        except (CompactFrameError, ValueError, TypeError) as exc:  # whatever a peer sent
            raise CodecError(f"not a compact squall frame: {exc}") from exc
    if head == PROTOCOL_MAGIC:
        try:
            return decode_messages(frame)
        except ProtocolFrameError as exc:
            raise CodecError(str(exc)) from exc
    if head == STATUS_MAGIC:
        return [_status(frame)]
    try:
        reader = pa.ipc.open_stream(frame)
        meta = {k.decode(): v.decode() for k, v in (reader.schema.metadata or {}).items()}
        component, stream = meta["component"], meta["stream"]
        table = reader.read_all().replace_schema_metadata(None)
        if "table" in meta:
            return [_table_delivery(component, stream, table, json.loads(meta["table"]))]
        as_json = set(json.loads(meta["json"]))
    except (pa.ArrowException, OSError, KeyError, ValueError, TypeError, UnicodeDecodeError) as exc:
        raise CodecError(f"not a squall frame: {exc}") from exc
    names = [n for n in table.column_names if n not in _ROUTING]
    columns = [
        [json.loads(v) for v in table.column(n).to_pylist()]
        if n in as_json
        else table.column(n).to_pylist()
        for n in names
    ]
    targets, tasks, roots, ids = (table.column(n).to_pylist() for n in _ROUTING)
    if not all(map(_one_id_per_root, roots, ids)):  # a bolt's acks would break on them
        raise CodecError("a tuple's routing must be one integer id per integer root")
    rows = list(zip(*columns, strict=True)) if columns else [()] * table.num_rows
    return [  # TupleDelivery(...) without its Python-level __new__
        _new(
            TupleDelivery,
            (target, component, task, stream, tuple(row), tuple(root), tuple(edge)),
        )
        for target, task, row, root, edge in zip(targets, tasks, rows, roots, ids, strict=True)
    ]


def _one_id_per_root(roots: list | None, ids: list | None) -> bool:
    if roots is None or ids is None or len(roots) != len(ids):
        return False
    return all(type(n) is int for n in roots) and all(type(n) is int for n in ids)


def _table_delivery(component: str, stream: str, table: pa.Table, routing: Any) -> TableDelivery:
    target, task = routing["target"], routing["task"]
    roots, ids = tuple(routing["roots"]), tuple(routing["ids"])
    numbers = (target, task, *roots, *ids)
    if len(roots) != len(ids) or not all(type(n) is int for n in numbers):
        raise CodecError("a table's routing must be integers, one id per root")
    return TableDelivery(target, component, task, stream, table, roots, ids)
