"""Two tiny plain-Python components with declared resources, for the resource-aware
scheduler's live test: the CPU load through the DSL, the memory per topology (conf)."""

from squall import Bolt, Grouping, Spout, Topology


class Numbers(Spout):
    outputs = ["n"]

    def initialize(self, conf, context):
        self.left = 10

    def next_tuple(self):
        if self.left == 0:
            return False
        self.left -= 1
        self.emit([self.left])
        return True


class Sink(Bolt):
    def process(self, tup):
        pass


class Sized(Topology):
    config = {"topology.acker.executors": 0}
    numbers = Numbers.spec(par=1).set_cpu_load(20)
    sink = Sink.spec(inputs={numbers: Grouping.shuffle}, par=1).set_cpu_load(20)
