"""How workers bound ZeroMQ messages (parts and bytes), throttle their log of drops, and
which CURVE clients the ZAP handler admits."""

from squall.worker.curve import ZAP_DOMAIN, TopologyPeers
from squall.worker.framing import (
    FRAME_OVERHEAD,
    MAX_PARTS,
    Throttle,
    frame_limit,
    over_bound,
    pack,
)


def test_frames_stay_clear_of_maxmsgsize_with_curves_overhead():
    assert frame_limit(64 * 2**20) == 64 * 2**20 - FRAME_OVERHEAD
    assert FRAME_OVERHEAD >= 33  # what CURVE's MESSAGE command adds to a frame
    assert frame_limit(10) == 1


def test_pack_keeps_order_and_bounds_bytes_and_parts():
    frames = [bytes([i]) * size for i, size in enumerate([4, 4, 3, 10, 1, 1])]
    messages = pack(frames, max_bytes=10, max_parts=2)
    assert [f for m in messages for f in m] == frames
    assert [[len(f) for f in m] for m in messages] == [[4, 4], [3], [10], [1, 1]]
    for m in messages:
        assert not over_bound(len(m), sum(map(len, m)), 10, 2)


def test_pack_of_nothing_is_no_message():
    assert pack([], 10) == []


def test_pack_puts_as_many_parts_as_the_receiver_takes():
    messages = pack([b"x"] * (2 * MAX_PARTS + 1), max_bytes=10**9)
    assert [len(m) for m in messages] == [MAX_PARTS, MAX_PARTS, 1]


def test_over_bound_at_one_past_either_limit():
    assert not over_bound(MAX_PARTS, 100, 100)
    assert over_bound(MAX_PARTS + 1, 100, 100)
    assert over_bound(1, 101, 100)


def test_throttle_reports_the_first_then_once_per_period_with_the_count():
    throttle = Throttle(every=10)
    assert throttle.note(100.0) == 1
    assert [throttle.note(t) for t in (101.0, 105.0, 109.9)] == [0, 0, 0]
    assert throttle.note(110.0) == 4
    assert throttle.note(111.0) == 0


def test_zap_admits_the_topology_key_only():
    peers = TopologyPeers(b"K" * 40, clock=lambda: 0.0)
    assert peers.callback(ZAP_DOMAIN, b"K" * 40)
    assert not peers.callback(ZAP_DOMAIN, b"J" * 40)
    assert not peers.callback("other", b"K" * 40)
    assert not peers.callback(ZAP_DOMAIN, b"K" * 39)
