"""What bench/pertuple.py compares squall with: the same words, upper-cased and counted per
word, by a Bytewax dataflow (item at a time, and in batches of 1000) and by a plain Python
loop. Each runs in its own process (bench/pertuple.py starts it with a wall-clock bound)
and prints one JSON object: tuples, seconds, rate, CPU seconds, peak RSS, and for batches
the source-to-sink latency.

    python bench/pertuple_others.py {bytewax-item|bytewax-batch|loop} TUPLES

The Bytewax dataflow has the topology's shape: an input that stamps each item (or batch)
with its emit time, `map` to upper case, `key_on` the word (Bytewax's fields grouping) and
a `stateful_map` that counts per word, into a sink that counts what arrives. With batches,
each batch of 1000 words is upper-cased whole and split into per-word counts (what fields
grouping does to a squall table) before the keyed count. One Bytewax worker, run_main.
"""

from __future__ import annotations

import json
import resource
import sys
import time
from collections import Counter
from typing import Any

from pertuple_stats import percentile
from pertuple_topology import word_stream

BATCH = 1000


def plain_loop(tuples: int) -> dict[str, Any]:
    words = word_stream()
    counts: Counter[str] = Counter()
    n = len(words)
    cpu, start = time.process_time(), time.perf_counter()
    for i in range(tuples):
        counts[words[i % n].upper()] += 1
    seconds = time.perf_counter() - start
    return {"tuples": sum(counts.values()), "seconds": seconds, "cpu": time.process_time() - cpu}


def bytewax(tuples: int, batch: bool) -> dict[str, Any]:
    import bytewax.operators as op
    from bytewax.dataflow import Dataflow
    from bytewax.inputs import DynamicSource, StatelessSourcePartition
    from bytewax.outputs import DynamicSink, StatelessSinkPartition
    from bytewax.testing import run_main

    words = word_stream()
    seen = {"tuples": 0}
    latencies: list[float] = []

    class Words(StatelessSourcePartition):
        def __init__(self) -> None:
            self.sent = 0

        def next_batch(self) -> list[Any]:
            if self.sent >= tuples:
                raise StopIteration
            first = self.sent % len(words)
            if batch:
                self.sent += BATCH
                return [(time.perf_counter(), words[first : first + BATCH])]
            self.sent += 1
            return [words[first]]

    class Source(DynamicSource):
        def build(self, step_id, worker_index, worker_count):
            return Words()

    class Counted(StatelessSinkPartition):
        def write_batch(self, items: list[Any]) -> None:
            if batch:
                now = time.perf_counter()
                for _, (ts, n, _total) in items:
                    seen["tuples"] += n
                    latencies.append((now - ts) * 1000)
            else:
                seen["tuples"] += len(items)

    class Sink(DynamicSink):
        def build(self, step_id, worker_index, worker_count):
            return Counted()

    flow = Dataflow("pertuple")
    stream = op.input("words", flow, Source())
    if batch:
        upper = op.map("upper", stream, lambda b: (b[0], [w.upper() for w in b[1]]))
        split = op.flat_map(
            "split", upper, lambda b: [(w, (b[0], n)) for w, n in Counter(b[1]).items()]
        )
        keyed = op.key_on("key", split, lambda item: item[0])

        def count(total, item):
            total = (total or 0) + item[1][1]
            return total, (item[1][0], item[1][1], total)

    else:
        upper = op.map("upper", stream, str.upper)
        keyed = op.key_on("key", upper, lambda w: w)

        def count(total, _word):
            total = (total or 0) + 1
            return total, total

    counts = op.stateful_map("count", keyed, count)
    op.output("out", counts, Sink())
    cpu, start = time.process_time(), time.perf_counter()
    run_main(flow)
    result: dict[str, Any] = {
        "tuples": seen["tuples"],
        "seconds": time.perf_counter() - start,
        "cpu": time.process_time() - cpu,
    }
    if batch:
        result["p50_ms"] = percentile(latencies, 50)
        result["p99_ms"] = percentile(latencies, 99)
    return result


def main() -> None:
    case, tuples = sys.argv[1], int(sys.argv[2])
    if case == "loop":
        result = plain_loop(tuples)
    elif case in ("bytewax-item", "bytewax-batch"):
        result = bytewax(tuples, batch=case == "bytewax-batch")
    else:
        raise SystemExit(f"unknown case {case!r}")
    result["rate"] = result["tuples"] / result["seconds"]
    result["cpu_pct"] = 100 * result.pop("cpu") / result["seconds"]
    result["rss_mib"] = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    print(json.dumps(result))


if __name__ == "__main__":
    main()
