"""A word count that never stops, for the UI tests: a spout emitting about 50 sentences a
second, a split bolt and a count bolt (fields grouping), with acking, in one worker."""

import time

from squall import Bolt, Grouping, Spout, Topology

SENTENCES = ["the cow jumped over the moon", "an apple a day", "four score and seven"]


class Sentences(Spout):
    outputs = ["sentence"]

    def initialize(self, conf, context):
        self.n = 0

    def next_tuple(self):
        time.sleep(0.02)
        self.n += 1
        self.emit([SENTENCES[self.n % len(SENTENCES)]], msg_id=self.n)
        return True


class Split(Bolt):
    outputs = ["word"]

    def process(self, tup):
        for word in tup.values[0].split():
            self.emit([word])


class Count(Bolt):
    def initialize(self, conf, context):
        self.counts = {}

    def process(self, tup):
        word = tup.values[0]
        self.counts[word] = self.counts.get(word, 0) + 1


class UiWords(Topology):
    config = {"topology.workers": 1}
    sentences = Sentences.spec(par=1)
    split = Split.spec(inputs={sentences: Grouping.shuffle}, par=2)
    count = Count.spec(inputs={split: Grouping.fields("word")}, par=2)
