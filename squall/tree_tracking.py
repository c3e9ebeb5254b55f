"""Which tasks track a topology's tuple trees (worker/acking.py's protocol): Storm's acker
tasks (`__acker` executors), or each spout task its own trees, as Heron's stream managers do
(`topology.spouts.track.trees`, squall's key, on by default).

A spout that tracks its trees draws roots that `ackers[root % n]` maps to itself, keeps each
tree's XOR beside its pending entry and XORs the bolts' acks into it as they arrive: no init
message per tree, no verdict message back, no acker turn between the last ack and the spout's
ack call. On the two-worker per-tuple bench that is 11% more tuples a second (the mean of
ten interleaved pairs, eight of them faster) and a complete latency p50 of 8.3-9.8 ms instead
of 10.5-12.7 in every pair; 8% less CPU a tuple on one worker (bench/RESULTS.md). It
costs nothing Storm's ackers gave: a worker's tasks take turns on one thread either way (with
topology.worker.shared.thread, the default), and a spout already drew its roots for an acker
of its own worker.

`topology.acker.executors` keeps Storm's meaning of 0 (no acking); its other values size the
`__acker` executors only where spouts do not track. Nimbus writes both keys, resolved, into
the topology's conf at submit, so its workers and getTopologyConf agree with what it
scheduled whatever the supervisors' own defaults say.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from squall.structure import ACKER, TopologyStructure

ACKERS_KEY = "topology.acker.executors"
SPOUTS_TRACK_KEY = "topology.spouts.track.trees"


def acker_executors(ackers: int, spouts_track: bool) -> int:
    """How many `__acker` executors a topology runs, given its resolved acker count."""
    return 0 if spouts_track else ackers


def tree_trackers(
    conf: Mapping[str, Any], structure: TopologyStructure, task_components: Mapping[int, str]
) -> list[int]:
    """The tasks bolts send their acks to (`ackers[root % n]`), sorted: the `__acker` tasks
    where nimbus scheduled any (also for a topology submitted before spouts tracked, whose
    conf lacks the key), else every spout task where spouts track their trees; none where
    acking is off."""
    ackers = sorted(t for t, c in task_components.items() if c == ACKER)
    if ackers or not conf.get(SPOUTS_TRACK_KEY, True) or conf.get(ACKERS_KEY) == 0:
        return ackers
    spouts = structure.spouts()
    return sorted(t for t, c in task_components.items() if c in spouts)
