"""Frames on the wire round-trip every delivery, typed or not."""

import random

import pyarrow as pa
import pytest

from squall.worker.codec import CodecError, _frame, decode, encode, encode_bounded
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


def _words(n: int, size: int) -> list[TupleDelivery]:
    return [TupleDelivery(1, "src", 7, "default", ("w" * size, i)) for i in range(n)]


def test_bounded_frames_fit_and_keep_every_delivery():
    deliveries = _words(64, 1000)
    [whole] = encode(deliveries, fields_of)
    limit = len(whole) // 3
    frames, too_large = encode_bounded(deliveries, fields_of, limit)
    assert too_large == [] and len(frames) > 1
    assert all(len(f) <= limit for f in frames)
    assert [d for f in frames for d in decode(f)] == deliveries


def test_bounded_frames_under_a_roomy_limit_are_the_plain_ones():
    deliveries = _words(5, 10)
    assert encode_bounded(deliveries, fields_of, 10**9) == (encode(deliveries, fields_of), [])


def test_a_delivery_larger_than_the_limit_alone_is_returned_not_framed():
    small, big = _words(3, 10), TupleDelivery(2, "src", 7, "default", ("x" * 50_000, 0))
    table = TableDelivery(4, "src", 7, "default", pa.table({"word": ["y" * 50_000], "n": [1]}))
    frames, too_large = encode_bounded([*small, big, table], fields_of, 20_000)
    assert too_large == [table, big]
    assert [d for f in frames for d in decode(f)] == small
    assert all(len(f) <= 20_000 for f in frames)


def test_a_frame_exactly_at_the_limit_is_sent():
    deliveries = _words(4, 100)
    [whole] = encode(deliveries, fields_of)
    assert encode_bounded(deliveries, fields_of, len(whole)) == ([whole], [])
    frames, _ = encode_bounded(deliveries, fields_of, len(whole) - 1)
    assert len(frames) == 2


def test_truncated_and_lying_frames_are_codec_errors():
    [frame] = encode(_words(3, 10), fields_of)
    rng = random.Random(11)
    for cut in sorted(rng.sample(range(1, len(frame)), 20)):
        with pytest.raises(CodecError):
            decode(frame[:cut])
    lying = bytearray(frame)
    lying[4:8] = (2**31 - 1).to_bytes(4, "little")  # the schema message claims 2 GiB
    with pytest.raises(CodecError):
        decode(bytes(lying))
