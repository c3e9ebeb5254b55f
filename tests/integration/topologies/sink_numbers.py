"""A hundred numbers into a FileSink, in plain Python (no Spark): where a sink's files go."""

from squall import Grouping, Spout, Topology
from squall.sinks import FileSink


class Numbers(Spout):
    outputs = ["n"]

    def initialize(self, conf, context):
        self.left = 100 if context.task_index == 0 else 0

    def next_tuple(self):
        if self.left == 0:
            return False
        self.left -= 1
        self.emit([self.left], msg_id=self.left)
        return True


class SinkNumbers(Topology):
    config = {"topology.workers": 1}
    numbers = Numbers.spec()
    sink = FileSink.spec(inputs={numbers: Grouping.shuffle})
