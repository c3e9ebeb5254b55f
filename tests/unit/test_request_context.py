"""The per-request identity: bound for the block on this thread only, restored after."""

import threading

from squall.nimbus.rpc.request_context import ANONYMOUS, RequestContext, bind, current


def test_bind_is_per_thread_and_nests():
    alice = RequestContext("alice", "10.0.0.1:5000")
    bob = RequestContext("bob", "10.0.0.2:5000")
    seen = []
    assert current() == ANONYMOUS
    with bind(alice):
        other = threading.Thread(target=lambda: seen.append(current()))
        other.start()
        other.join(10)
        with bind(bob):
            assert current() == bob
        assert current() == alice
    assert current() == ANONYMOUS
    assert seen == [ANONYMOUS]  # another thread never sees this one's caller
