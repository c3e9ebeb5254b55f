"""Protocol messages travel as frames of packed int64s of their own, checked on the way in."""

import contextlib
import struct

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from squall.worker.acking import AckTree, FailTree, InitTree, TreeDone, TreeFailed
from squall.worker.codec import MAGIC, CodecError, decode, encode, encode_bounded
from squall.worker.delivery import TupleDelivery
from squall.worker.parking import Parking
from squall.worker.protocol_frames import (
    FEW_KEYS,
    KINDS,
    PROTOCOL_MAGIC,
    encode_messages,
    grouped_by,
)

FIELDS = {("src", "default"): ("word",)}


def fields_of(component, stream):
    return FIELDS[(component, stream)]


INT64 = st.integers(-(2**63), 2**63 - 1)
MESSAGES = st.one_of(
    st.builds(InitTree, INT64, INT64, INT64, INT64),
    st.builds(AckTree, INT64, INT64, INT64),
    st.builds(FailTree, INT64, INT64),
    st.builds(TreeDone, INT64, INT64),
    st.builds(TreeFailed, INT64, INT64),
)


@settings(max_examples=200, deadline=None)
@given(st.lists(MESSAGES, max_size=40), st.integers(37, 400))
def test_messages_round_trip_in_order_per_type_under_any_bound(messages, max_bytes):
    frames, unsendable = encode_messages(messages, max_bytes)
    assert unsendable == [] and all(len(f) <= max_bytes for f in frames)
    out = [m for f in frames for m in decode(f)]
    assert all(type(m) in KINDS for m in out)
    for kind in KINDS:  # the same messages, of their own type, in their order
        assert [m for m in out if type(m) is kind] == [m for m in messages if type(m) is kind]


def test_messages_and_tuples_share_a_send_and_keep_their_types():
    sent = [
        AckTree(3, -5, 2**63 - 1),
        TupleDelivery(4, "src", 1, "default", ("w",), (7,), (8,)),
        TreeDone(1, -(2**63)),
        AckTree(3, 6, 0),
    ]
    frames = encode(sent, fields_of)
    assert [f[:4] for f in frames] == [PROTOCOL_MAGIC, PROTOCOL_MAGIC, MAGIC]
    out = [d for f in frames for d in decode(f)]
    assert out == [sent[0], sent[3], sent[2], sent[1]]
    assert type(out[0]) is AckTree and type(out[2]) is TreeDone  # not plain tuples


def test_a_message_that_cannot_fit_or_overflows_is_returned_not_framed():
    frames, unsendable = encode_bounded([FailTree(1, 2), InitTree(1, 2, 3, 4)], fields_of, 30)
    assert unsendable == [InitTree(1, 2, 3, 4)]  # 5 + 32 bytes > 30
    assert [m for f in frames for m in decode(f)] == [FailTree(1, 2)]
    frames, unsendable = encode_messages([AckTree(1, 2**63, 0), AckTree(1, 2, 0)], 10**6)
    assert frames == [] and unsendable == [AckTree(1, 2**63, 0), AckTree(1, 2, 0)]


def _frame(code: int, *values: int) -> bytes:
    return PROTOCOL_MAGIC + bytes([code]) + struct.pack(f"<{len(values)}q", *values)


@pytest.mark.parametrize(
    "frame",
    [
        PROTOCOL_MAGIC,  # no type byte
        _frame(1),  # no messages
        _frame(len(KINDS), 1, 2),  # an unknown type
        _frame(255, 1, 2),
        _frame(1, 1, 2),  # an AckTree is three int64s, not two
        _frame(1, 1, 2, 3, 4),  # one and a third
        _frame(1, 1, 2, 3) + b"\x00",  # trailing byte
        _frame(0, 1, 2, 3, 4)[:-1],  # truncated
    ],
)
def test_malformed_protocol_frames_are_codec_errors(frame):
    with pytest.raises(CodecError):
        decode(frame)


def test_a_little_endian_frame_reads_the_same_everywhere():
    assert decode(_frame(1, 9, -1, 2**62)) == [AckTree(9, -1, 2**62)]


def test_parking_never_holds_protocol_messages_and_keeps_data_order():
    full = {1}
    delivered: list = []
    parking = Parking(delivered.extend, lambda task: task in full)
    data = [TupleDelivery(1, "src", 9, "default", (f"w{i}",)) for i in range(3)]
    parking.arrived([data[0], AckTree(1, 2, 3), TupleDelivery(2, "src", 9, "default", ("x",))])
    assert delivered == [AckTree(1, 2, 3), TupleDelivery(2, "src", 9, "default", ("x",))]
    parking.arrived([TreeDone(1, 4), *data[1:]])
    assert delivered[2:] == [TreeDone(1, 4)]
    full.clear()
    parking.retry()
    assert delivered[3:] == data and parking.parked == {}
    parking.arrived([data[0], FailTree(1, 5)])  # nothing full: delivered as it came
    assert delivered[6:] == [data[0], FailTree(1, 5)]


@pytest.mark.parametrize("distinct", [1, 3, FEW_KEYS + 5])
def test_grouped_by_is_the_loop_it_replaces(distinct):
    items = list(range(200))
    keys = [("k", (i * 7) % distinct) for i in items]
    expected: dict = {}
    for item, key in zip(items, keys, strict=True):
        expected.setdefault(key, []).append(item)
    got = grouped_by(items, keys)
    assert got == expected and list(got) == list(expected)  # first-appearance order too


def _good_frames() -> list[bytes]:
    tuples = [
        TupleDelivery(4, "src", 1, "default", ("w",), (7,), (8,)),
        TupleDelivery(5, "src", 2, "default", (None,), (7, 9), (8, 10)),
        TupleDelivery(6, "src", 3, "default", ({"k": [1.5]},)),
    ]
    return encode([*tuples, AckTree(3, -5, 6), InitTree(1, 2, 3, 4)], fields_of)


@settings(max_examples=300, deadline=None)
@given(
    st.sampled_from(range(3)),
    st.lists(st.tuples(st.integers(0, 10_000), st.integers(0, 255)), max_size=4),
    st.integers(0, 10_000),
    st.binary(max_size=12),
)
def test_a_mangled_frame_decodes_or_is_a_codec_error_nothing_else(which, flips, cut, extra):
    """What a hostile key holder can send: any byte changed, the frame cut, bytes added."""
    frame = bytearray(_good_frames()[which])
    for at, value in flips:
        frame[at % len(frame)] = value
    mangled = bytes(frame[: max(cut, 4)]) + extra
    with contextlib.suppress(CodecError):
        decode(mangled)
