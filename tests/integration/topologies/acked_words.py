"""Words with message ids through a shuffle and a fields grouping on two workers, acking on:
the per-tuple path end to end, tuples and acks crossing workers (test_compiled_build.py)."""

from collections import Counter

from squall import Bolt, Grouping, Spout, Topology

WORDS = ("storm", "spark", "zookeeper", "thrift", "nimbus", "squall", "tuple", "bolt")
TOTAL = 4000


class Words(Spout):
    outputs = ["word"]

    def initialize(self, conf, context):
        self.sent = 0

    def next_tuple(self):
        if self.sent == TOTAL:
            return False
        self.emit([WORDS[self.sent % len(WORDS)]], msg_id=self.sent)
        self.sent += 1
        return True


class Upper(Bolt):
    outputs = ["word"]

    def process(self, tup):
        self.emit([tup.values[0].upper()])


class Count(Bolt):
    def initialize(self, conf, context):
        self.counts = Counter()

    def process(self, tup):
        self.counts[tup.values[0]] += 1


class AckedWords(Topology):
    name = "acked-words"
    config = {"topology.workers": 2, "topology.acker.executors": 2}
    words = Words.spec(par=1)
    upper = Upper.spec(inputs={words: Grouping.shuffle}, par=2)
    count = Count.spec(inputs={upper: Grouping.fields("word")}, par=2)
