"""Word count: lines of a bundled text -> words -> counts computed as PySpark jobs -> totals.

squall local examples/wordcount.py --output-dir out     # run it on a local cluster
python examples/wordcount.py verify out                 # compare with a plain count
"""

from __future__ import annotations

import json
import os
import re
import sys
from collections import Counter
from pathlib import Path

from squall import Bolt, Grouping, SparkBolt, Spout, Topology

TEXT = Path(__file__).parent / "data" / "text.txt"
WORD = re.compile(r"[a-z']+")


def words_of(line: str) -> list[str]:
    return WORD.findall(line.lower())


class LineSpout(Spout):
    """Each task emits its share of the text's lines once, then runs dry."""

    outputs = ["line"]

    def initialize(self, conf, context):
        lines = TEXT.read_text().splitlines()
        self.lines = iter(lines[context.task_index :: len(context.component_tasks)])

    def next_tuple(self) -> bool:
        line = next(self.lines, None)
        if line is None:
            return False
        self.emit([line])
        return True


class SplitBolt(Bolt):
    outputs = ["word"]

    def process(self, tup):
        for word in words_of(tup["line"]):
            self.emit([word])


class CountBolt(SparkBolt):
    """Counts each micro-batch of words with a Spark groupBy."""

    outputs = ["word", "count"]

    def process_batch(self, df):
        return df.groupBy("word").count()


class TotalBolt(Bolt):
    """Adds up the per-batch counts and keeps them in one JSON file per task. The file is
    rewritten whole (write, then rename), so replays and restarts never leave it torn."""

    def initialize(self, conf, context):
        self.totals: Counter[str] = Counter()
        Path(context.output_dir).mkdir(parents=True, exist_ok=True)
        self.path = Path(context.output_dir) / f"counts-{context.task_id}.json"

    def process(self, tup):
        self.totals[tup["word"]] += tup["count"]

    def idle(self):
        tmp = self.path.with_suffix(".tmp")
        tmp.write_text(json.dumps(self.totals, sort_keys=True))
        os.replace(tmp, self.path)


class WordCount(Topology):
    name = "wordcount"
    config = {"topology.workers": 3}

    lines = LineSpout.spec(par=2)
    split = SplitBolt.spec(inputs={lines: Grouping.shuffle}, par=2)
    count = CountBolt.spec(inputs={split: Grouping.fields("word")}, par=2)
    total = TotalBolt.spec(inputs={count: Grouping.fields("word")}, par=2)


def verify(output_dir: str) -> int:
    """Compare the topology's totals with a plain Python count of the same text."""
    expected = Counter(w for line in TEXT.read_text().splitlines() for w in words_of(line))
    got: Counter[str] = Counter()
    for path in sorted(Path(output_dir).glob("counts-*.json")):
        got.update(json.loads(path.read_text()))
    for word, count in got.most_common(10):
        print(f"{word:>12} {count}")
    if got != expected:
        wrong = sorted(w for w in expected.keys() | got.keys() if got[w] != expected[w])
        print(f"MISMATCH: {len(wrong)} words differ, e.g. {wrong[:5]}")
        return 1
    print(f"OK: {len(got)} distinct words, {sum(got.values())} in all, equal to a plain count")
    return 0


if __name__ == "__main__" and sys.argv[1:2] == ["verify"]:
    sys.exit(verify(sys.argv[2]))
