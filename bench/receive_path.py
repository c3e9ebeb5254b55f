"""The receive side of a remote tuple, apart from the rest of a worker: a compact frame of the
pertuple bench's tuples (a word and a float, one root) for two tasks of this worker, taken
in the way a worker does it now (compact_rows, then Inbound.deliver_rows: Tuples straight
from the frame's columns) and the way it did before (decode into a TupleDelivery per row,
then Inbound.deliver_many). Each round takes the tasks' queues empty again, as their
executors would; the garbage collector is tuned as in a worker. Best of 9 interleaved
runs, us a row.

    .venv/bin/python bench/receive_path.py [--rows 512]
    SQUALL_PURE=1 .venv/bin/python bench/receive_path.py    # the per-tuple path interpreted
"""

from __future__ import annotations

import argparse
import time
from collections.abc import Callable

from crossing import NoIO

from squall.components import TaskContext
from squall.config import cluster_conf
from squall.structure import ComponentInfo, GroupingSpec, InputSpec, TopologyStructure
from squall.worker.codec import decode
from squall.worker.compact_frames import compact_frame, compact_rows
from squall.worker.delivery import TupleDelivery
from squall.worker.executors import Executor
from squall.worker.inbound import Inbound
from squall.worker.main import tune_garbage_collector

TARGETS = (3, 4)
FRAMES = 200
ROUNDS = 9


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--rows", type=int, default=512, help="rows per frame")
    n = p.parse_args().rows
    upper = ComponentInfo("upper", "bolt", "m", "C", {}, 2, (), {"default": ("word", "t")}, {})
    by_word = (InputSpec("upper", "default", GroupingSpec("fields", ("word",))),)
    count = ComponentInfo("count", "bolt", "m", "C", {}, 2, by_word, {"default": ("word",)}, {})
    structure = TopologyStructure({"upper": upper, "count": count})
    conf = cluster_conf(**{"topology.executor.receive.buffer.size": 10**9})
    executors = {
        t: Executor(None, TaskContext("b", "count", t, TARGETS, "/tmp"), {}, conf, NoIO())
        for t in TARGETS
    }
    inbound = Inbound(structure, executors)
    inbound.fields_of("upper", "default")
    rows = [
        TupleDelivery(
            TARGETS[i % 2],
            "upper",
            1 + i % 2,
            "default",
            (f"WORD{i % 1000}", time.time()),
            (i * 7919,),
            (i * 104729,),
        )
        for i in range(n)
    ]
    frame = compact_frame("upper", "default", rows, 2)
    tune_garbage_collector(None)

    def by_rows() -> None:
        assert inbound.deliver_rows(compact_rows(frame))

    def by_deliveries() -> None:
        inbound.deliver_many(decode(frame))

    takes = {"rows (now)": by_rows, "deliveries (before)": by_deliveries}
    best = dict.fromkeys(takes, float("inf"))
    for _ in range(ROUNDS):  # interleaved: a slow moment of the machine hits both
        for label, take in takes.items():
            best[label] = min(best[label], run(take, executors, n))
    print(f"{n} rows a frame, us a row (best of {ROUNDS} interleaved runs of {FRAMES} frames):")
    for label, us in best.items():
        print(f"  {label:20s} {us:.3f}")


def run(take: Callable[[], None], executors: dict[int, Executor], n: int) -> float:
    start = time.perf_counter()
    for _ in range(FRAMES):
        take()
        for executor in executors.values():
            executor.inbox.take(n, 0)
    return (time.perf_counter() - start) / (FRAMES * n) * 1e6


if __name__ == "__main__":
    main()
