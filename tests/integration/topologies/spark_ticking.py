"""A topology that never stops feeding a SparkBolt: its spout emits about 20 numbers a
second, and the SparkBolt counts each micro-batch in a Spark job, so tests can take its Spark
away while it runs."""

import time

from squall import Grouping, SparkBolt, Spout, Topology


class Ticks(Spout):
    outputs = ["n"]

    def initialize(self, conf, context):
        self.n = 0

    def next_tuple(self):
        time.sleep(0.05)
        self.n += 1
        self.emit([self.n])
        return True


class Count(SparkBolt):
    outputs = ["rows"]

    def process_batch(self, df):
        return df.selectExpr("count(*) AS rows")


class SparkTicking(Topology):
    config = {"topology.workers": 1, "topology.acker.executors": 0}
    ticks = Ticks.spec(par=1)
    count = Count.spec(inputs={ticks: Grouping.shuffle}, par=1)
