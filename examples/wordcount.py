"""Word count: lines of a bundled text -> per-line word counts as PySpark jobs -> an
idempotent sink -> totals.

    squall local examples/wordcount.py --output-dir out     # run it on a local cluster
    python examples/wordcount.py verify out                 # compare with a plain count

Lines are tracked tuples: a line whose tuple tree fails or times out is emitted again.
Because counts are kept per (line, word) in an idempotent sink, a replayed line rewrites
its own rows instead of adding to them, and the totals stay exact.
"""

from __future__ import annotations

import re
import sys
from collections import Counter
from pathlib import Path

from squall import Grouping, SparkBolt, Spout, Topology
from squall.sinks import IdempotentFileSink

TEXT = Path(__file__).parent / "data" / "text.txt"
WORD = re.compile(r"[a-z']+")


def words_of(line: str) -> list[str]:
    return WORD.findall(line.lower())


class LineSpout(Spout):
    """Each task emits its share of the text's lines as (number, line), then runs dry."""

    outputs = ["n", "line"]

    def initialize(self, conf, context):
        lines = TEXT.read_text().splitlines()
        n, i = len(context.component_tasks), context.task_index
        self.todo = {number: line for number, line in enumerate(lines) if number % n == i}
        self.next = iter(sorted(self.todo))
        self.replay: list[int] = []

    def next_tuple(self) -> bool:
        number = self.replay.pop() if self.replay else next(self.next, None)
        if number is None:
            return False
        self.emit([number, self.todo[number]], msg_id=number)
        return True

    def ack(self, msg_id):
        del self.todo[msg_id]

    def fail(self, msg_id):
        self.replay.append(msg_id)


class CountWords(SparkBolt):
    """A Spark job per micro-batch of lines: split into words, count per line and word."""

    outputs = ["n", "word", "count"]

    def process_batch(self, df):
        from pyspark.sql import functions as F

        df = df.dropDuplicates(["n"])  # a replayed line may share a batch with its original
        words = df.select("n", F.explode(F.split(F.lower("line"), "[^a-z']+")).alias("word"))
        return words.where(F.col("word") != "").groupBy("n", "word").count()


class WordCount(Topology):
    name = "wordcount"
    config = {"topology.workers": 3, "topology.message.timeout.secs": 60}

    lines = LineSpout.spec(par=2)
    count = CountWords.spec(inputs={lines: Grouping.shuffle}, par=2)
    sink = IdempotentFileSink.spec(
        inputs={count: Grouping.fields("word")}, par=2, key_fields=["n", "word"]
    )


def totals(output_dir: str | Path) -> Counter[str]:
    rows = IdempotentFileSink.read(output_dir, "sink")
    out: Counter[str] = Counter()
    for row in rows.values():
        out[row["word"]] += row["count"]
    return out


def verify(output_dir: str) -> int:
    """Compare the topology's totals with a plain Python count of the same text."""
    expected = Counter(w for line in TEXT.read_text().splitlines() for w in words_of(line))
    got = totals(output_dir)
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
