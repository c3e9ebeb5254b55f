"""A small plain-Python topology for API tests: no Spark, so its workers start fast."""

import logging

from squall import Bolt, Grouping, Spout, Topology


class Numbers(Spout):
    outputs = ["n"]

    def initialize(self, conf, context):
        self.left = 100

    def next_tuple(self):
        if self.left == 0:
            return False
        self.left -= 1
        self.emit([self.left])
        return True


class Sink(Bolt):
    def process(self, tup):
        pass

    def set_credentials(self, creds):
        """Storm's ICredentialsListener: logs the keys it got (never the values)."""
        logging.getLogger("tiny").info("sink credentials: %s", sorted(creds))


class Tiny(Topology):
    config = {"topology.workers": 2}
    numbers = Numbers.spec(par=2)
    sink = Sink.spec(inputs={numbers: Grouping.shuffle}, par=2)
