"""The README's first topology: lines of a file -> words -> counts per micro-batch (Spark)
-> a file sink. It runs the same on a laptop and on a cluster of several hosts.

    squall local examples/first_topology.py --output-dir out   # a throw-away local cluster
    squall submit examples/first_topology.py                   # a running cluster
    python examples/first_topology.py out                      # the totals in an output dir

`squall submit` packs this file's folder (examples/, with first_topology.txt) and each
supervisor unpacks it for its workers, which import this file from there: so `HERE` is, in
every worker, the folder where the data file lies on that host. A worker's working directory
is its supervisor's, not this folder, so a bare relative `open("first_topology.txt")` would
fail there. The code between the two marker lines is the README's code block, word for word
(tests/unit/test_readme_example.py).
"""

from __future__ import annotations

import sys
from collections import Counter

# README begin
from pathlib import Path

from squall import Bolt, Grouping, SparkBolt, Spout, Topology
from squall.sinks import FileSink

HERE = Path(__file__).parent  # in a worker: the copy of this folder its supervisor unpacked


class Lines(Spout):
    outputs = ["line"]

    def initialize(self, conf, context):
        # path: relative to this folder (shipped with the topology), or absolute
        lines = (HERE / self.kwargs["path"]).read_text(encoding="utf-8").splitlines()
        # task i of n emits lines i, i+n, i+2n, ...: each line once, whatever the parallelism
        i, n = context.task_index, len(context.component_tasks)
        self.lines = iter(lines[i::n])

    def next_tuple(self):  # return False when there is nothing to emit now
        line = next(self.lines, None)
        if line is None:
            return False
        self.emit([line])
        return True


class Split(Bolt):  # plain Python, one tuple at a time
    outputs = ["word"]

    def process(self, tup):
        for word in tup["line"].lower().split():
            self.emit([word])


class Count(SparkBolt):  # a PySpark job per micro-batch
    outputs = ["word", "count"]

    def process_batch(self, df):  # df has the input stream's fields as columns
        return df.groupBy("word").count()


class FirstTopology(Topology):
    config = {"topology.workers": 2}
    lines = Lines.spec(par=2, path="first_topology.txt")
    split = Split.spec(inputs={lines: Grouping.shuffle}, par=2)
    count = Count.spec(inputs={split: Grouping.fields("word")}, par=2)
    sink = FileSink.spec(inputs=[count])


# README end


def totals(output_dir: str | Path) -> Counter[str]:
    """Each word's total: the sum of its counts over every micro-batch the sink wrote."""
    counts: Counter[str] = Counter()
    for row in FileSink.table(output_dir, "sink").to_pylist():
        counts[row["word"]] += row["count"]
    return counts


def plain_count(text: str) -> Counter[str]:
    """The same count in plain Python, to check a run against."""
    return Counter(text.lower().split())


if __name__ == "__main__":
    if len(sys.argv) != 2:
        sys.exit("usage: python examples/first_topology.py OUTPUT_DIR")
    for word, count in totals(sys.argv[1]).most_common():
        print(f"{count:4d} {word}")
