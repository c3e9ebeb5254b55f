"""The benchmark's word count: partitioned files (followed as they grow) -> per-batch word
counts in Spark -> a running total per word. Input directory from $SQUALL_BENCH_INPUT and
worker count from $SQUALL_BENCH_WORKERS (read at submit). The split is the same expression
Structured Streaming runs in bench/throughput.py.

One worker and one SparkBolt task: the worker's SparkSession (local[*]) already spreads each
job over every core, so a second JVM or a second concurrent job only adds overhead on a small
machine (measured in bench/RESULTS.md). A micro-batch takes whatever has queued, up to
1,000,000 lines, which keeps the fixed cost of a Spark job small against the work in it."""

import json
import os
from collections import Counter
from pathlib import Path

from squall import Bolt, Grouping, SparkBolt, Topology
from squall.sources import PartitionedFileSpout

SPLIT = "[^a-z0-9']+"


class CountWords(SparkBolt):
    outputs = ["word", "count"]

    def process_batch(self, df):
        from pyspark.sql import functions as F

        words = df.select(F.explode(F.split(F.lower("line"), SPLIT)).alias("word"))
        return words.where(F.col("word") != "").groupBy("word").count()


class Totals(Bolt):
    def initialize(self, conf, context):
        self.totals = Counter()
        self.path = Path(context.output_dir) / f"totals-{context.task_id}.json"
        self.path.parent.mkdir(parents=True, exist_ok=True)

    def process(self, tup):
        self.totals[tup["word"]] += tup["count"]

    def idle(self):
        self.path.write_text(json.dumps(self.totals))


class WordCountBench(Topology):
    config = {
        "topology.workers": int(os.environ.get("SQUALL_BENCH_WORKERS", "1")),
        "topology.batch.size": 1_000_000,
        "topology.batch.timeout.ms": 50,  # start a job soon after data appears
    }
    lines = PartitionedFileSpout.spec(
        par=2,
        path=os.environ.get("SQUALL_BENCH_INPUT", "/nonexistent"),
        group="bench",
        batch_lines=10_000,
        follow=True,
    )
    count = CountWords.spec(inputs={lines: Grouping.shuffle}, par=1)
    totals = Totals.spec(inputs={count: Grouping.fields("word")}, par=2)
