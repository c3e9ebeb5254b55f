"""Which connection makes room: idle and slow clients go first, running calls never."""

from squall.nimbus.rpc.connection_limits import ConnectionView, admit, room_for_authenticated, slack


def conns(*specs):
    return [ConnectionView(i, address, since) for i, (address, since) in enumerate(specs, 1)]


def test_room_admits_without_closing_anything():
    decision = admit(conns(("a", 1.0)), "b", max_total=2, max_per_address=2)
    assert decision.admit and decision.evict is None


def test_full_closes_the_connection_waiting_longest():
    current = conns(("a", 5.0), ("b", 1.0), ("c", 3.0))
    decision = admit(current, "d", max_total=3, max_per_address=3)
    assert decision.admit and decision.evict == 2
    assert "nimbus.thrift.max.connections" in decision.reason


def test_running_calls_are_never_closed_to_make_room():
    current = conns(("a", None), ("b", 9.0), ("c", None))
    assert admit(current, "d", max_total=3, max_per_address=3).evict == 2
    busy = conns(("a", None), ("b", None))
    decision = admit(busy, "d", max_total=2, max_per_address=2)
    assert decision.admit and decision.evict is None  # over the cap, within its slack
    busy = conns(*[("a", None)] * (2 + slack(2)))
    decision = admit(busy, "d", max_total=2, max_per_address=100)
    assert not decision.admit and decision.evict is None


def test_a_host_at_its_cap_makes_room_from_its_own_connections():
    current = conns(("x", 1.0), ("attacker", 7.0), ("attacker", 8.0))
    decision = admit(current, "attacker", max_total=10, max_per_address=2)
    assert decision.admit and decision.evict == 2  # not x's, though x waited longer
    assert "per-address" in decision.reason


def test_a_host_at_its_cap_with_every_call_running_is_refused():
    current = conns(("x", 1.0), *[("h", None)] * (4 + slack(4)))
    assert not admit(current, "h", max_total=4, max_per_address=1).admit


def test_ties_go_to_the_older_connection():
    current = conns(("a", 2.0), ("b", 2.0))
    assert admit(current, "c", max_total=2, max_per_address=2).evict == 1


def test_a_call_waiting_for_a_thread_is_closed_after_idle_connections():
    """Closing it drops the call (never run): idle and slow clients go first, however long
    the call has queued behind busy handler threads."""
    connections = [
        ConnectionView(1, "a", 5.0, queued=True),
        ConnectionView(2, "b", 10.0),
        ConnectionView(3, "c", None),
    ]
    assert admit(connections, "d", 3, 10).evict == 2
    assert admit(connections[::2], "d", 2, 10).evict == 1  # then a queued one, not a running one


def test_an_authenticated_connection_is_never_closed_for_a_newcomer():
    """The admin's idle connection waited longest, but strangers' go first; with only
    authenticated ones left to close, the newcomer (not authenticated yet) is refused."""
    admin = ConnectionView(1, "h", 1.0, authenticated=True)
    strangers = [ConnectionView(i, "h", float(i)) for i in range(2, 5)]
    decision = admit([admin, *strangers], "h", max_total=100, max_per_address=4)
    assert decision.admit and decision.evict == 2
    decision = admit([admin, *strangers], "h", max_total=4, max_per_address=100)
    assert decision.admit and decision.evict == 2
    everyone = [ConnectionView(i, "h", float(i), authenticated=True) for i in range(1, 4)]
    decision = admit(everyone, "h", max_total=3, max_per_address=3)
    assert decision.admit and decision.evict is None  # over the cap until it authenticates


def test_once_authenticated_a_newcomer_over_the_cap_closes_the_longest_waiting_one():
    """A certificate holder's idle sessions cannot lock other holders out either."""
    held = [ConnectionView(i, "h", float(i), authenticated=True) for i in range(1, 4)]
    running = ConnectionView(4, "h", None, authenticated=True)
    me = ConnectionView(5, "h", 9.0, authenticated=True)
    assert room_for_authenticated([*held, running, me], me, 4, 100) == 1
    assert room_for_authenticated([running, me], me, 1, 100) is None  # only a running call
    assert room_for_authenticated([*held, me], me, 10, 100) is None  # within the caps
