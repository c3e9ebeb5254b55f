"""Backpressure on a real cluster (two workers, ZeroMQ between them): an unthrottled spout
with acking off into a slow bolt is held back, and what lies between them stops growing.
Counts are compared, never timings: without backpressure the spout runs tens of thousands of
tuples a second ahead of a bolt that takes under a thousand, beat after beat.

What the spout emits before the bolt's first congestion status reaches its worker (its rate
times that first status's latency, tens of thousands of tuples on an idle machine) is parked
by the bolt's worker: bounded, but not by the buffer sizes. The test therefore checks that
the gap stops growing once the spout is held, not an absolute bound."""

from squall import thrift_api as T
from squall.local import ClusterError, topology_id, topology_progress, wait_for
from squall.submit import submit_file

from .conftest import TOPOLOGIES

BUFFER = 200  # the topology's receive and transfer buffer sizes
# How far the gap may grow once the spout is held: a burst of the spout, its worker's
# transfer queue and the bolt's queue, and a beat of the bolt's counts arriving first.
SLACK = 10 * BUFFER
HELD_BEATS = 3  # beats watched after the spout was first seen held


def _every_worker_beat(before: tuple[int, ...], now: tuple[int, ...]) -> bool:
    """Whether every worker beat again since `before` (the sorted seqs of the two workers)."""
    return not set(before) & set(now) and all(a < b for a, b in zip(before, now, strict=True))


def _gap(beat: dict) -> int:
    return beat["emitted"] - beat["executed"]


def test_an_unthrottled_spout_is_held_and_the_gap_stops_growing(cluster):
    conf = cluster.base_conf_full()
    with cluster.client() as client:
        submit_file(client, TOPOLOGIES / "flood.py", cluster.client_conf())
        tid = topology_id(client, "flooded")
    try:
        seen: list[dict] = []
        held_at: list[int] = []  # the index of the beat where the spout was first seen held

        def held_for_a_while():
            now = topology_progress(conf, tid)
            if now is None or now["executed"] == 0:
                return None
            if seen and not _every_worker_beat(seen[-1]["seqs"], now["seqs"]):
                return None  # compare only beats where both workers' counts are fresh
            seen.append(now)
            if not held_at and len(seen) >= 2:
                before = seen[-2]
                if _gap(now) <= _gap(before) and now["executed"] > before["executed"]:
                    # the bolt worked and the spout did not get further ahead: held (paused
                    # for the beat, or let go only as far as the bolt took)
                    held_at.append(len(seen) - 1)
            return held_at and len(seen) > held_at[0] + HELD_BEATS

        try:
            wait_for(held_for_a_while, 120, "the spout to be held behind the slow bolt", 0.3)
        except ClusterError as exc:
            raise AssertionError(f"{exc}; the beats seen: {seen}") from exc
        held = seen[held_at[0]]
        after = seen[held_at[0] :]
        assert all(_gap(beat) <= _gap(held) + SLACK for beat in after), seen
        assert after[-1]["executed"] > held["executed"]  # the bolt kept working
        assert all(s["errors"] == 0 for s in seen)
    finally:
        with cluster.client() as client:
            client.killTopologyWithOpts("flooded", T.KillOptions(wait_secs=0))
