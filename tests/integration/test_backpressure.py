"""Backpressure on a real cluster (two workers, ZeroMQ between them): an unthrottled spout
with acking off stays within the buffer bounds of a slow bolt, beat after beat. Counts are
compared, never timings: without backpressure the spout runs tens of thousands of tuples a
second ahead of a bolt that takes under a thousand."""

from squall import thrift_api as T
from squall.local import topology_id, topology_progress, wait_for
from squall.submit import submit_file

from .conftest import TOPOLOGIES

BUFFER = 200  # the topology's topology.executor.receive.buffer.size
# What may be between the spout's count and the bolt's: the bolt's queue, what its worker
# parked while the status was on its way to the spout's worker (the spout's rate times one
# round trip: the larger part), and the two workers beating at different moments (up to a
# beat of the bolt's < 1000 tuples/s).
BOUND = 50 * BUFFER
BEATS = 4


def test_an_unthrottled_spout_stays_within_the_slow_bolts_buffer(cluster):
    conf = cluster.base_conf_full()
    with cluster.client() as client:
        submit_file(client, TOPOLOGIES / "flood.py", cluster.client_conf())
        tid = topology_id(client, "flooded")
    try:
        seen: list[dict] = []

        def next_beat():
            now = topology_progress(conf, tid)
            if now is None or now["executed"] == 0:
                return None
            if seen and now["seqs"] == seen[-1]["seqs"]:
                return None
            seen.append(now)
            assert now["emitted"] - now["executed"] <= BOUND, seen
            # several beats, and the spout went on once the bolt had caught up
            return len(seen) >= BEATS and now["emitted"] > seen[0]["emitted"]

        wait_for(next_beat, 120, "the flooded topology to beat and its spout to resume", 0.3)
        assert seen[-1]["executed"] > seen[0]["executed"]  # the bolt kept working
        assert all(s["errors"] == 0 for s in seen)
    finally:
        with cluster.client() as client:
            client.killTopologyWithOpts("flooded", T.KillOptions(wait_secs=0))
