"""A SparkBolt whose SparkSession cannot start: `local[0]` passes spark-submit's check but
SparkContext refuses it ("Asked to run locally with 0 threads") within seconds. A test may
submit it with another spark.master."""

import time

from squall import SparkBolt, Spout, Topology


class Trickle(Spout):
    outputs = ["n"]

    def initialize(self, conf, context):
        self.n = 0
        self.next_at = 0.0

    def next_tuple(self):
        now = time.monotonic()
        if now < self.next_at or self.n >= 50:
            return False
        self.next_at = now + 0.1
        self.n += 1
        self.emit([self.n], msg_id=self.n)
        return True


class Passthrough(SparkBolt):
    outputs = ["n"]

    def process_batch(self, df):
        return df


class SparkFails(Topology):
    config = {"topology.workers": 1, "spark.master": "local[0]"}
    trickle = Trickle.spec()
    sparky = Passthrough.spec(inputs=[trickle])
