"""Frames on the wire round-trip every delivery, typed or not."""

import pyarrow as pa
import pytest

from squall.worker.codec import CodecError, _frame, decode, encode
from squall.worker.delivery import TableDelivery, TupleDelivery

FIELDS = {("src", "default"): ("word", "n"), ("src", "odd"): ("x",), ("a", "s"): ()}


def fields_of(component, stream):
    return FIELDS[(component, stream)]


def test_round_trip_groups_by_stream():
    deliveries = [
        TupleDelivery(1, "src", 7, "default", ("a", 1)),
        TupleDelivery(2, "src", 7, "default", ("b", 2), (11, -12), (3, 4)),
        TupleDelivery(1, "src", 8, "odd", ({"k": [1, 2]},)),
        TupleDelivery(1, "src", 8, "odd", ("mixed",)),  # mixed types: travels as JSON
        TupleDelivery(3, "a", 9, "s", (), (5,), (6,)),
    ]
    out = [d for frame in encode(deliveries, fields_of) for d in decode(frame)]
    assert sorted(out, key=repr) == sorted(deliveries, key=repr)


def test_garbage_is_a_codec_error():
    with pytest.raises(CodecError):
        decode(b"not arrow at all")


def test_a_table_travels_as_its_own_frame():
    table = pa.table({"word": ["a", "b", None], "n": [1, 2, 3]})
    sent = TableDelivery(4, "src", 7, "default", table, (2**62, -5), (9, 10))
    row = TupleDelivery(1, "src", 7, "default", ("c", 4))
    out = [d for frame in encode([sent, row], fields_of) for d in decode(frame)]
    assert out == [sent, row] or out == [row, sent]
    [got] = [d for d in out if isinstance(d, TableDelivery)]
    assert got.table.equals(table) and got.roots == (2**62, -5)


def test_a_table_with_bad_routing_is_a_codec_error():
    table = pa.table({"x": [1]})
    for routing in (
        '{"target": 1, "task": 8, "roots": [1], "ids": []}',
        '{"target": "1", "task": 8, "roots": [], "ids": []}',
        '{"target": 1, "task": 8, "roots": [1.5], "ids": [2]}',
        '{"target": 1}',
        "[]",
    ):
        frame = _frame(table, {"component": "src", "stream": "odd", "table": routing})
        with pytest.raises(CodecError):
            decode(frame)
    [good] = encode([TableDelivery(1, "src", 8, "odd", table)], fields_of)
    for cut in (10, len(good) // 2, len(good) - 3):
        with pytest.raises(CodecError):
            decode(good[:cut])
