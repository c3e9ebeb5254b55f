"""Nimbus gives back strangers' connection memory every RECLAIM_EVERY ended connections
(nimbus/rpc/reclaim.py): the count, and that a collection frees a cycle holding a buffer."""

import gc
import weakref

from squall.nimbus.rpc.reclaim import Reclaimer


class Holder:
    pass


def test_every_nth_ended_connection_reclaims_a_cycle():
    reclaimer = Reclaimer(every=3)
    held = Holder()
    held.buffer, held.me = bytearray(256 * 1024), held  # a cycle, as a failed handshake's
    alive = weakref.ref(held)
    del held
    gc.disable()  # only the reclaimer may collect in this test
    try:
        assert [reclaimer.note_ended() for _ in range(3)] == [False, False, True]
        assert alive() is None
        assert [reclaimer.note_ended() for _ in range(3)] == [False, False, True]
    finally:
        gc.enable()
