"""A bolt that raises on every tuple of a spout that emits about 200 a second: without a
throttle its /errors node would be rewritten on every one."""

import time

from squall import Bolt, Spout, Topology


class Fast(Spout):
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
        self.emit([self.n])
        return True


class Raiser(Bolt):
    def process(self, tup):
        raise ValueError(f"cannot handle {tup.values[0]}")


class Raising(Topology):
    config = {
        "topology.workers": 1,
        "topology.max.error.report.per.interval": 2,
        "topology.error.throttle.interval.secs": 3,
    }
    fast = Fast.spec()
    raiser = Raiser.spec(inputs=[fast])
