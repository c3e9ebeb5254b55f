"""Arrow batches on the wire round-trip every delivery, typed or not."""

import pytest

from squall.worker.codec import CodecError, decode, encode

FIELDS = {("src", "default"): ("word", "n"), ("src", "odd"): ("x",), ("a", "s"): ()}


def fields_of(component, stream):
    return FIELDS[(component, stream)]


def test_round_trip_groups_by_stream():
    deliveries = [
        [1, "src", 7, "default", ["a", 1], [], []],
        [2, "src", 7, "default", ["b", 2], [11, -12], [3, 4]],
        [1, "src", 8, "odd", [{"k": [1, 2]}], [], []],
        [1, "src", 8, "odd", ["mixed"], [], []],  # mixed types: travels as JSON
        [3, "a", 9, "s", [], [5], [6]],
    ]
    out = [d for frame in encode(deliveries, fields_of) for d in decode(frame)]
    assert sorted(out, key=repr) == sorted(deliveries, key=repr)


def test_garbage_is_a_codec_error():
    with pytest.raises(CodecError):
        decode(b"not arrow at all")
