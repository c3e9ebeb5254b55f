"""A plain-Python topology that never stops: its spout emits about 20 numbers a second and
logs a line at INFO every 20, so tests can watch a worker's log over time."""

import logging
import time

from squall import Bolt, Grouping, Spout, Topology

log = logging.getLogger("ticking")


class Ticks(Spout):
    outputs = ["n"]

    def initialize(self, conf, context):
        self.n = 0

    def next_tuple(self):
        time.sleep(0.05)
        self.n += 1
        self.emit([self.n])
        if self.n % 20 == 0:
            log.info("ticked %d", self.n)
        return True


class Sink(Bolt):
    def process(self, tup):
        pass


class Ticking(Topology):
    config = {"topology.workers": 1, "topology.acker.executors": 0}
    ticks = Ticks.spec(par=1)
    sink = Sink.spec(inputs={ticks: Grouping.shuffle}, par=1)
