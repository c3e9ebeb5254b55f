"""A word count written with streamparse (pystorm) classes, unchanged from how it runs on
Storm: packed into a jar's resources/ and started by `streamparse_run` in each task."""

import os
from collections import Counter

from streamparse import Bolt, Spout

SENTENCES = [
    "the cow jumped over the moon",
    "an apple a day keeps the doctor away",
    "four score and seven years ago",
    "snow white and the seven dwarfs",
    "i am at two with nature",
] * 20


class SentenceSpout(Spout):
    outputs = ["sentence"]

    def initialize(self, stormconf, context):
        self.left = list(SENTENCES)

    def next_tuple(self):
        if self.left:
            sentence = self.left.pop(0)
            self.emit([sentence], tup_id=f"s{len(self.left)}")

    def ack(self, tup_id):
        pass

    def fail(self, tup_id):
        self.logger.error("sentence %s failed", tup_id)


class SplitBolt(Bolt):
    outputs = ["word"]

    def process(self, tup):
        for word in tup.values[0].split():
            self.emit([word])


class CountBolt(Bolt):
    outputs = ["word", "count"]

    def initialize(self, conf, ctx):
        self.counts = Counter()
        out = conf["topology.output.dir"]
        os.makedirs(out, exist_ok=True)
        self.file = open(os.path.join(out, f"counts-{ctx['taskid']}.txt"), "a")  # noqa: SIM115 - open for the task's life

    def process(self, tup):
        word = tup.values[0]
        self.counts[word] += 1
        self.file.write(f"{word} {self.counts[word]}\n")
        self.file.flush()
        self.emit([word, self.counts[word]])
