"""Nimbus's decision for a lost supervisor alone, in one process, for N workers (issue #15
item 4: failover time independent of N): supervisors of SLOTS slots, topologies of 50
workers and 100 tasks placed by a round over every topology, then decide.handle on the
SupervisorsChanged that loses the first supervisor, best of three, in process CPU seconds.
With SLOTS fixed, the lost host runs workers of at most SLOTS topologies whatever N is, so
a decision whose cost follows what changed stays flat; one that schedules every topology
grows with N. No ZooKeeper: bench/controlplane.py measures the whole reaction.

    .venv/bin/python bench/failover_decision.py [--slots 10] 1000 5000 20000
"""

from __future__ import annotations

import sys
import time

from squall.config import load_defaults
from squall.nimbus.core import events as ev
from squall.nimbus.core.decide import handle
from squall.nimbus.core.instructions import WriteAssignment
from squall.nimbus.core.model import NimbusModel, NimbusSettings, TopologyModel
from squall.nimbus.core.reassign import reassign_round
from squall.records import StormBase, SupervisorInfo
from squall.structure import assign_task_ids

WORKERS_PER_TOPOLOGY = 50


def cluster(n: int, slots: int) -> NimbusModel:
    settings = NimbusSettings.from_conf(load_defaults())
    ports = list(range(6700, 6700 + slots))
    sups = {f"sim{i:05d}": SupervisorInfo("127.0.0.1", ports, 0) for i in range(-(-n // slots))}
    topologies = {}
    for i in range(n // WORKERS_PER_TOPOLOGY):
        tid = f"cp{i:05d}-00000000-0"
        executors = {"source": WORKERS_PER_TOPOLOGY, "sink": WORKERS_PER_TOPOLOGY}
        base = StormBase(tid, "active", 0, WORKERS_PER_TOPOLOGY, executors)
        topologies[tid] = TopologyModel(tid, base, assign_task_ids(executors))
    model = NimbusModel(settings, topologies, sups, epoch=1, leading=True)
    model, _ = reassign_round(model, dict.fromkeys(topologies, True), {}, 0.0, 0.0)
    # a leader's occupancy is built by its first monitor round and carried from then on
    occupied = getattr(model, "occupied", None)  # absent in the code before slice F2
    return occupied() if occupied else model


def lost_supervisor(n: int, slots: int) -> tuple[float, int]:
    """(best CPU seconds of three, topologies rewritten)."""
    model = cluster(n, slots)
    after = dict(model.supervisors)
    after.pop(min(after))
    best, out = float("inf"), []
    for _ in range(3):
        cpu = time.process_time()
        _, out = handle(model, ev.SupervisorsChanged(5.0, time.time(), after, {}))
        best = min(best, time.process_time() - cpu)
    return best, sum(isinstance(i, WriteAssignment) for i in out)


def main(argv: list[str]) -> None:
    slots = 10
    if "--slots" in argv:
        at = argv.index("--slots")
        slots = int(argv[at + 1])
        argv = argv[:at] + argv[at + 2 :]
    for n in [int(a) for a in argv] or [1000, 5000, 20000]:
        cpu, moved = lost_supervisor(n, slots)
        print(f"N={n} slots={slots}: lost supervisor decided in {cpu:.4f} s CPU, {moved} rewritten")


if __name__ == "__main__":
    main(sys.argv[1:])
