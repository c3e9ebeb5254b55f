"""Frames on the wire round-trip every delivery, typed or not."""

import random
import struct

import msgpack
import pyarrow as pa
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from squall.worker.codec import (
    MAGIC,
    CodecError,
    _frame,
    decode,
    encode,
    encode_bounded,
)
from squall.worker.delivery import TableDelivery, TupleDelivery

FIELDS = {
    ("src", "default"): ("word", "n"),
    ("src", "odd"): ("x",),
    ("a", "s"): (),
    ("a", "default"): ("word", "n"),
}


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


def test_each_stream_of_each_component_keeps_its_order_when_interleaved():
    """One frame per (component, stream), each in the order sent, whether a send holds one
    stream of one component (the codec's shortcut) or several, interleaved."""
    one = [TupleDelivery(1, "src", 7, "default", (w, n)) for n, w in enumerate("abcd")]
    other = [TupleDelivery(2, "src", 8, "odd", (n,)) for n in range(3)]
    third = [TupleDelivery(3, "a", 9, "s", ()) for _ in range(2)]
    fourth = [TupleDelivery(4, "a", 9, "default", ("z", n)) for n in range(2)]
    mixed = [one[0], other[0], third[0], one[1], other[1], one[2], third[1], other[2], one[3]]
    two_streams = [one[0], other[0], one[1]]  # one component on two streams
    two_components = [one[0], fourth[0], fourth[1], one[1]]  # one stream of two components
    for sent, groups in [
        (one, [one]),
        (mixed, [one, other, third]),
        (two_streams, [[one[0], one[1]], [other[0]]]),
        (two_components, [[one[0], one[1]], fourth]),
    ]:
        frames = encode(sent, fields_of)
        assert [decode(frame) for frame in frames] == groups


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
    arrow = [TupleDelivery(1, "src", 7, "default", ("w", 2**64 + i)) for i in range(200)]
    [frame] = encode(arrow, fields_of)  # an Arrow frame: msgpack holds no 2**64
    assert not frame.startswith(MAGIC)
    rng = random.Random(11)
    for cut in sorted(rng.sample(range(1, len(frame)), 20)):
        with pytest.raises(CodecError):
            decode(frame[:cut])
    lying = bytearray(frame)
    lying[4:8] = (2**31 - 1).to_bytes(4, "little")  # the schema message claims 2 GiB
    with pytest.raises(CodecError):
        decode(bytes(lying))


@pytest.mark.parametrize(
    ("roots", "ids"), [((10, 11), (12,)), ((10,), ()), ((), (5,)), ((10,), (None,))]
)
def test_an_arrow_frame_whose_tuple_has_not_one_id_per_root_is_a_codec_error(roots, ids):
    """What a bolt's acks would trip over later (an IndexError or a XOR with None)."""
    odd = tuple.__new__(TupleDelivery, (1, "src", 7, "default", ("w", 2**64), roots, ids))
    [frame] = encode([odd], fields_of)  # an Arrow frame: msgpack holds no 2**64
    assert not frame.startswith(MAGIC)
    with pytest.raises(CodecError, match="one integer id per integer root"):
        decode(frame)


def test_tuples_travel_as_compact_frames_at_any_length():
    short = [TupleDelivery(2, "src", 7, "default", ("b", 2), (2**63 - 1, -(2**63)), (3, 4))]
    [frame] = encode(short, fields_of)
    assert frame.startswith(MAGIC) and decode(frame) == short
    long = _words(5000, 3)
    [frame] = encode(long, fields_of)
    assert frame.startswith(MAGIC) and decode(frame) == long
    assert all(type(d) is TupleDelivery and type(d.values) is tuple for d in decode(frame))


def test_compact_frames_keep_every_row_its_own_anchors():
    rows = [(), (1,), (2, 3), (), (4, 5, 6)]  # uneven: row by row
    even = [(7, 8), (9, 10)]  # two each: in C
    for anchors in (rows, even, [(11,), (12,)], [(), ()]):
        sent = [
            TupleDelivery(i, "src", 7, "default", (f"w{i}", i), a, tuple(-x for x in a))
            for i, a in enumerate(anchors)
        ]
        [frame] = encode(sent, fields_of)
        assert frame.startswith(MAGIC) and decode(frame) == sent


def test_values_msgpack_cannot_hold_fall_back_to_arrow():
    for value in (2**64, {1, 2}, "\ud800"):  # beyond 64 bits, a set, a lone surrogate
        sent = [TupleDelivery(1, "src", 8, "odd", (value,))]
        [frame] = encode(sent, fields_of)
        assert not frame.startswith(MAGIC)
        [got] = decode(frame)
        assert got.target == 1 and got.values != () and got.task == 8


def _compact(*head) -> bytes:
    return MAGIC + msgpack.packb(list(head), use_bin_type=True)


def _routing(*numbers: int) -> bytes:
    return struct.pack(f"<{len(numbers)}q", *numbers)


GOOD = _routing(1, 7, 1, 5, 6)  # target 1, task 7, one root: 5 with id 6
VALUES = [["w", 1]]


def test_the_good_compact_frame_of_the_hostile_list_decodes():
    assert decode(_compact("src", "default", 2, GOOD, VALUES)) == [
        TupleDelivery(1, "src", 7, "default", ("w", 1), (5,), (6,))
    ]


@pytest.mark.parametrize(
    "frame",
    [
        MAGIC,
        MAGIC + b"\xc1",  # never-used byte
        _compact("src", "default", 2, GOOD, VALUES)[:-2],  # truncated
        _compact("src", "default", 2, GOOD, VALUES) + b"\x00",  # trailing data
        _compact("src", "default", 2, GOOD),  # too short
        _compact("src", "default", 2, GOOD, VALUES, 1),  # too long
        _compact(1, "default", 2, GOOD, VALUES),  # component not a string
        _compact("src", None, 2, GOOD, VALUES),  # stream not a string
        _compact("src", "default", 2, GOOD, {"rows": 1}),  # values not a list
        _compact("src", "default", 2, GOOD, [("w", 1, 2)]),  # values not the stream's width
        _compact("src", "default", 3, GOOD, VALUES),  # width not the values'
        _compact("src", "default", "2", GOOD, VALUES),  # width as text
        _compact("src", "default", [2], GOOD, VALUES),  # width unhashable
        _compact("src", "default", 2.0, GOOD, VALUES),  # width a float
        _compact("src", "default", True, GOOD, [["w"]]),  # width a bool
        _compact("src", "default", 2, GOOD, ["w1"]),  # a row that is not a list
        _compact("src", "default", 2, GOOD, [{"w": 1}]),
        _compact("src", "default", 2, GOOD[:-1], VALUES),  # routing not int64s
        _compact("src", "default", 2, GOOD[:-8], VALUES),  # a root without its id
        _compact("src", "default", 2, GOOD + _routing(0), VALUES),  # one number too many
        _compact("src", "default", 2, _routing(1, 7, 0), VALUES * 2),  # routing for one row
        _compact("src", "default", 2, _routing(1, 7, -1, 5, 6), VALUES),  # negative count
        _compact("src", "default", 2, _routing(1, 7, 2, 5, 6), VALUES),  # count beyond
        _compact("src", "default", 2, [1, 7, [5], [6]], VALUES),  # routing not bytes
        _compact("src", "default", 2, "routing!", VALUES),  # routing as text
        _compact("src", "default", 1, GOOD, [[{(1,): 2}]]),  # unhashable key
        MAGIC + b"\x91" * 100_000 + b"\xc0",  # nested past the decoder's stack
        b"SQK1" + msgpack.packb(["src", "default", 2, [[1, 7, [], [], ["w", 1]]]]),  # old
    ],
)
def test_hostile_compact_frames_are_codec_errors(frame):
    with pytest.raises(CodecError):
        decode(frame)


@settings(max_examples=200, deadline=None)
@given(
    st.lists(
        st.tuples(
            st.integers(-(2**63), 2**63 - 1),
            st.integers(-(2**63), 2**63 - 1),
            st.lists(st.integers(-(2**63), 2**63 - 1), max_size=3),
            st.one_of(st.text(max_size=5), st.integers(-(2**63), 2**64 - 1), st.none()),
        ),
        min_size=1,
        max_size=30,
    )
)
def test_any_tuples_round_trip_in_order(rows):
    sent = [
        TupleDelivery(
            target, "src", task, "odd", (value,), tuple(roots), tuple(r ^ 1 for r in roots)
        )
        for target, task, roots, value in rows
    ]
    out = [d for f in encode(sent, fields_of) for d in decode(f)]
    assert out == sent
