"""An unthrottled spout (acking off) into a deliberately slow bolt, on two workers: only
backpressure keeps the spout within the bolt's receive buffer."""

import time

from squall import Bolt, Grouping, Spout, Topology


class Flood(Spout):
    outputs = ["n"]

    def initialize(self, conf, context):
        self.n = 0

    def next_tuple(self):
        self.n += 1
        self.emit([self.n])
        return True


class Slow(Bolt):
    def process(self, tup):
        time.sleep(0.001)  # the slow consumer under test, not a wait in the test


class Flooded(Topology):
    name = "flooded"
    config = {
        "topology.workers": 2,
        "topology.acker.executors": 0,
        "topology.executor.receive.buffer.size": 200,
        "topology.transfer.buffer.size": 200,
        "topology.producer.batch.size": 50,
    }
    flood = Flood.spec(par=1)
    slow = Slow.spec(inputs={flood: Grouping.shuffle}, par=1)
