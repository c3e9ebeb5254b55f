"""A plain-Python topology that never runs dry (a tuple every few milliseconds, across two
workers), so a probe can see it keep going after an attack."""

import time

from squall import Bolt, Grouping, Spout, Topology


class Ticks(Spout):
    outputs = ["n"]

    def initialize(self, conf, context):
        self.n = 0
        self.next_at = 0.0

    def next_tuple(self):
        now = time.monotonic()
        if now < self.next_at:
            return False
        self.next_at = now + 0.005
        self.n += 1
        self.emit([self.n], msg_id=self.n)
        return True


class Count(Bolt):
    def process(self, tup):
        pass


class Endless(Topology):
    config = {"topology.workers": 2}
    ticks = Ticks.spec(par=2)
    count = Count.spec(inputs={ticks: Grouping.shuffle}, par=2)
