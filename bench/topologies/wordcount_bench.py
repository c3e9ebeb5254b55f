"""The benchmark's word count: partitioned files -> per-batch word counts in Spark -> a
running total per word. Input directory from $SQUALL_BENCH_INPUT (read at submit)."""

import json
import os
from collections import Counter
from pathlib import Path

from squall import Bolt, Grouping, SparkBolt, Topology
from squall.sources import PartitionedFileSpout


class CountWords(SparkBolt):
    outputs = ["word", "count"]

    def process_batch(self, df):
        from pyspark.sql import functions as F

        words = df.select(F.explode(F.split(F.lower("line"), "[^a-z']+")).alias("word"))
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
        "topology.workers": 2,
        "topology.max.spout.pending": 2000,
        "topology.batch.size": 10000,
        "topology.batch.timeout.ms": 500,
        "topology.acker.executors": 0,
    }
    lines = PartitionedFileSpout.spec(
        par=2, path=os.environ.get("SQUALL_BENCH_INPUT", "/nonexistent"), group="bench"
    )
    count = CountWords.spec(inputs={lines: Grouping.shuffle}, par=2)
    totals = Totals.spec(inputs={count: Grouping.fields("word")}, par=2)
