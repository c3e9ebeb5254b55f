"""Partitioned input -> per-line word counts in Spark -> idempotent sink. The input
directory comes from $SQUALL_TEST_INPUT when the file is loaded (at submit)."""

import os

from squall import Grouping, SparkBolt, Topology
from squall.sinks import IdempotentFileSink
from squall.sources import PartitionedFileSpout


class CountLineWords(SparkBolt):
    outputs = ["partition", "offset", "word", "count"]

    def process_batch(self, df):
        from pyspark.sql import functions as F

        # a replay and its slow original can share a micro-batch: count one copy of each line
        df = df.dropDuplicates(["partition", "offset"])
        words = df.select(
            "partition", "offset", F.explode(F.split("line", " ")).alias("word")
        ).where(F.col("word") != "")
        return words.groupBy("partition", "offset", "word").count()


class Partitioned(Topology):
    config = {
        "topology.workers": 3,
        "topology.message.timeout.secs": 10,
        "topology.max.spout.pending": 40,
        "topology.batch.timeout.ms": 100,
    }
    lines = PartitionedFileSpout.spec(
        par=2, path=os.environ.get("SQUALL_TEST_INPUT", "/nonexistent"), group="kill-test"
    )
    count = CountLineWords.spec(inputs={lines: Grouping.shuffle}, par=2)
    sink = IdempotentFileSink.spec(
        inputs={count: Grouping.fields("word")}, par=2, key_fields=["partition", "offset", "word"]
    )
