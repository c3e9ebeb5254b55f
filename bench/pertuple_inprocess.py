"""The per-tuple cost without a cluster: bench/pertuple_topology.py's tasks (one spout, two
upper-casing and two counting bolts; the spout tracks its own tuple trees, or with --ackers one
__acker does, Storm's way) built as squall.testing builds them (worker/in_process.py: as a
worker does, on one shared thread, every task local). It prints the tuples counted per
second and per CPU-second over a window. Without ZooKeeper, nimbus, a supervisor and the
transport, this machine's noise is smaller than in bench/pertuple.py: it is how an A/B of the
per-tuple code itself (interleaved runs, e.g. a compiled build against another) was measured.

    python bench/pertuple_inprocess.py [--seconds S] [--untracked] [--ackers] [--gc-young N]
    SQUALL_PURE=1 python bench/pertuple_inprocess.py    # interpreted, against the compiled install
"""

from __future__ import annotations

import argparse
import json
import os
import tempfile
import time
from pathlib import Path

WARMUP_SECS = 2.0


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--seconds", type=float, default=5.0, help="the window")
    p.add_argument("--untracked", action="store_true", help="emit without message ids")
    p.add_argument("--ackers", action="store_true", help="one __acker tracks the trees")
    p.add_argument("--gc-young", type=int, help="topology.worker.gc.young.threshold")
    args = p.parse_args()
    # read by the topology when it is imported
    os.environ["SQUALL_BENCH_PERTUPLE"] = json.dumps({"tracked": not args.untracked})
    import pertuple_topology

    from squall.config import cluster_conf
    from squall.structure import ACKER
    from squall.tree_tracking import SPOUTS_TRACK_KEY
    from squall.worker.in_process import build_tasks
    from squall.worker.main import tune_garbage_collector
    from squall.worker.spark import SparkHolder

    out = tempfile.mkdtemp(prefix="squall-inprocess-")
    topology = pertuple_topology.PerTuple
    track = {SPOUTS_TRACK_KEY: not args.ackers, "topology.acker.executors": 1}
    conf = cluster_conf(**{**topology.config, "topology.output.dir": out, **track})

    def instance(name: str):
        spec = None if name == ACKER else topology.specs[name]
        return None if spec is None else spec.component(**spec.kwargs)

    spark = SparkHolder(conf, "inprocess", Path(out) / "spark")  # unused: no SparkBolt
    structure = topology.structure()
    report_error = print  # none expected
    executors = build_tasks(structure, conf, instance, out, spark, report_error).executors
    tune_garbage_collector(args.gc_young)  # where a worker calls it: before the threads
    for executor in executors.values():
        executor.start()
    time.sleep(1.0)  # the components' initialize, on the group's thread
    for executor in executors.values():
        executor.activate(True)
    time.sleep(WARMUP_SECS)
    counters = [e.component for e in executors.values() if hasattr(e.component, "counted")]
    counted0, cpu0, wall0 = sum(c.counted for c in counters), time.process_time(), time.time()
    time.sleep(args.seconds)
    counted1, cpu1, wall1 = sum(c.counted for c in counters), time.process_time(), time.time()
    n = counted1 - counted0
    print(
        f"counted {n / (wall1 - wall0):,.0f}/s, {n / (cpu1 - cpu0):,.0f} per CPU-second, "
        f"CPU {100 * (cpu1 - cpu0) / (wall1 - wall0):.0f}%"
    )
    for executor in executors.values():
        executor.stop()
    os._exit(0)  # the executors' threads are daemons; nothing to flush


if __name__ == "__main__":
    main()
