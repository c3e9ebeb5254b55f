"""Word count: partitioned text -> words counted per line batch (pyarrow, in the worker) ->
totals per micro-batch (a PySpark job) -> a file sink.

    squall local examples/wordcount.py --output-dir out     # run it on a local cluster
    python examples/wordcount.py verify out                 # compare with a plain count

It is Storm's word-count topology (spout -> split -> count) on squall's columnar path:

- `lines` reads the files of examples/data/text (or the directory in $SQUALL_WORDCOUNT_INPUT
  when the topology is submitted), a file a partition, in tracked batches of up to 100,000
  lines, and commits offsets to ZooKeeper behind the acks. With $SQUALL_WORDCOUNT_FOLLOW=1
  it keeps reading what is appended to the files.
- `split` gets each line batch whole as an Arrow table, splits it into words and counts
  them with pyarrow.compute, without a Python object per word. Counting here is Spark's own
  map-side partial aggregation, done next to the source: what goes on is one (word, count)
  row per distinct word of the batch instead of a row per word (a million words a batch).
- `count` is a SparkBolt: a Spark job per micro-batch sums the partial counts per word.
- `sink` writes each micro-batch's counts to a file; the totals are their sum.

Processing is at-least-once, as in Storm's own word count: a line batch that fails or times
out is replayed, and counted again if its first try reached the sink. For counts that stay
exact under replays, see examples/exact_wordcount.py.
"""

from __future__ import annotations

import os
import re
import sys
from collections import Counter
from pathlib import Path

import pyarrow as pa
import pyarrow.compute as pc

from squall import Bolt, Grouping, SparkBolt, Topology
from squall.sinks import FileSink
from squall.sources import PartitionedFileSpout

INPUT = os.environ.get("SQUALL_WORDCOUNT_INPUT") or str(Path(__file__).parent / "data" / "text")
FOLLOW = os.environ.get("SQUALL_WORDCOUNT_FOLLOW") == "1"
SEPARATORS = "[^a-z0-9']+"  # a word: letters, digits and apostrophes, lower-cased


def split_words(lines: pa.ChunkedArray | pa.Array) -> pa.Array:
    lower = pc.utf8_lower(lines)
    # Splitting on a regular expression costs a match per word. Lines of nothing but word
    # characters and spaces split the same on the space (less the empty strings between
    # two spaces, dropped below), in less than half the time.
    plain = pc.match_substring_regex(lower, "^[a-z0-9' ]*$")
    if pc.all(plain).as_py() is not False:
        words = pc.list_flatten(pc.split_pattern(lower, " "))
    else:
        plain_words = pc.split_pattern(lower.filter(plain), " ")
        other_words = pc.split_pattern_regex(lower.filter(pc.invert(plain)), SEPARATORS)
        words = pa.concat_arrays(
            [
                pc.list_flatten(plain_words).combine_chunks(),
                pc.list_flatten(other_words).combine_chunks(),
            ]
        )
    return words.filter(pc.not_equal(words, ""))


class SplitWords(Bolt):
    outputs = ["word", "count"]

    def process_table(self, batch):
        counts = pc.value_counts(split_words(batch.table.column("line")))
        self.emit_batch({"word": counts.field("values"), "count": counts.field("counts")})


class CountWords(SparkBolt):
    outputs = ["word", "count"]

    def process_batch(self, df):
        from pyspark.sql import functions as F

        return df.groupBy("word").agg(F.sum("count").alias("count"))


def line_batches(group: str):
    """The text's lines, 100,000 a tracked batch, read by two spout tasks as consumer `group`."""
    return PartitionedFileSpout.spec(
        par=2, path=INPUT, group=group, batch_lines=100_000, follow=FOLLOW
    )


class WordCount(Topology):
    name = "wordcount"
    config = {
        "topology.workers": 3,
        "topology.batch.size": 2_000_000,  # partial counts a Spark job takes at most
        "topology.batch.timeout.ms": 50,
        "topology.max.spout.pending": 20,  # line batches in flight per spout task
    }

    lines = line_batches("wordcount")
    split = SplitWords.spec(inputs={lines: Grouping.shuffle}, par=2)
    count = CountWords.spec(inputs={split: Grouping.shuffle}, par=1)
    sink = FileSink.spec(inputs={count: Grouping.fields("word")}, par=2)


def totals(output_dir: str | Path) -> Counter[str]:
    """The sum of the sink's counts (one row per key, where the sink has keys)."""
    table = FileSink.table(output_dir, "sink")
    if not table.num_rows:
        return Counter()
    sums = table.group_by("word").aggregate([("count", "sum")])
    words, counts = sums["word"].to_pylist(), sums["count_sum"].to_pylist()
    return Counter(dict(zip(words, counts, strict=True)))


def plain_count(texts: list[str]) -> Counter[str]:
    separators = re.compile(SEPARATORS)
    return Counter(w for text in texts for w in separators.split(text.lower()) if w)


def verify(output_dir: str, got: Counter[str] | None = None) -> int:
    """Compare the topology's totals with a plain Python count of the same text."""
    expected = plain_count([p.read_text() for p in sorted(Path(INPUT).iterdir())])
    got = totals(output_dir) if got is None else got
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
