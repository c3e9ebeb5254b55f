"""A bolt that takes longer to start than the message timeout, as a SparkBolt's SparkSession
does on a loaded host: tuples a spout emitted before it was ready would all time out."""

import time

from squall import Bolt, Grouping, Spout, Topology

START_SECS = 6


class Numbers(Spout):
    outputs = ["n"]

    def initialize(self, conf, context):
        self.left = 50

    def next_tuple(self):
        if self.left == 0:
            return False
        self.left -= 1
        self.emit([self.left], msg_id=self.left)
        return True


class SlowStart(Bolt):
    def initialize(self, conf, context):
        time.sleep(START_SECS)

    def process(self, tup):
        pass


class SlowStartTopology(Topology):
    config = {"topology.workers": 2, "topology.message.timeout.secs": 2}
    numbers = Numbers.spec(par=1)
    slow = SlowStart.spec(inputs={numbers: Grouping.shuffle}, par=2)
