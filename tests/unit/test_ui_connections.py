"""Which UI connections make room for a newcomer (squall/ui/connections.py): strangers'
unproven connections go oldest first; a connection that proved its token never does."""

from squall.ui.connections import Limits, Seen, to_close

LIMITS = Limits(total=4, per_peer=3, header_secs=10)


def _seen(id_: int, proven: bool = False, peer: str = "127.0.0.1") -> Seen:
    return Seen(id_, peer, float(id_), proven)


def test_room_closes_nothing():
    conns = [_seen(1), _seen(2, True), _seen(3)]
    assert to_close(conns, conns[-1], LIMITS) == []


def test_past_the_cap_the_oldest_unproven_goes_never_a_token_holder():
    conns = [_seen(1, True), _seen(2, True), _seen(3, peer="a"), _seen(4, peer="b"), _seen(5)]
    assert to_close(conns, conns[-1], LIMITS) == [3]


def test_when_everyone_else_is_proven_the_newcomer_is_refused():
    conns = [_seen(i, True) for i in range(1, 5)] + [_seen(5)]
    assert to_close(conns, conns[-1], LIMITS) == [5]


def test_a_peer_past_its_unproven_cap_loses_its_own_oldest_first():
    conns = [_seen(1, peer="b"), _seen(2, True), _seen(3), _seen(4), _seen(5), _seen(6)]
    assert to_close(conns, conns[-1], Limits(total=10, per_peer=3)) == [3]  # not b's


def test_a_flood_of_strangers_leaves_every_token_holder():
    holders = [_seen(i, True) for i in range(1, 3)]
    conns = list(holders)
    for i in range(3, 1000):
        conns.append(_seen(i))
        closing = set(to_close(conns, conns[-1], LIMITS))
        conns = [c for c in conns if c.id not in closing]
        assert len(conns) <= LIMITS.total and all(h in conns for h in holders)
