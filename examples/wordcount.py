"""Word count: partitioned text -> words (pyarrow, in the worker) -> counts (a PySpark job per
micro-batch) -> an idempotent sink -> totals.

    squall local examples/wordcount.py --output-dir out     # run it on a local cluster
    python examples/wordcount.py verify out                 # compare with a plain count

It is Storm's word-count topology (spout -> split -> count) on squall's columnar path:

- `lines` reads the files of examples/data/text (or the directory in $SQUALL_WORDCOUNT_INPUT
  when the topology is submitted), a file a partition, in tracked batches of up to 10,000
  lines, and commits offsets to ZooKeeper behind the acks. With $SQUALL_WORDCOUNT_FOLLOW=1
  it keeps reading what is appended to the files.
- `split` splits a batch's lines into words with pyarrow.compute, without a Python object
  per word, and tags each word with the line batch it came from.
- `count` is a SparkBolt: each micro-batch of words is one Spark job that counts them per
  line batch and word.
- `sink` keeps one count per (line batch, word).

Why the counts stay exact when batches are replayed: a line batch is named by its partition
and first offset, and a replay has the same lines, so its counts rewrite their own keys in
the sink instead of adding to them. A replay and its slow original can meet in one
micro-batch; every split emission carries a random `copy` number, and the Spark job keeps
the counts of one copy.
"""

from __future__ import annotations

import hashlib
import os
import random
import re
import sys
from collections import Counter
from pathlib import Path

import pyarrow as pa
import pyarrow.compute as pc

from squall import Bolt, Grouping, SparkBolt, Topology
from squall.sinks import IdempotentFileSink
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


def batch_id(partition: str, first_offset: int) -> int:
    """A line batch's name as a 64-bit id (Spark groups by a number faster than by a
    string); two names share an id with odds of 2**-64, the odds Storm's acking takes."""
    digest = hashlib.blake2b(f"{partition}@{first_offset}".encode(), digest_size=8).digest()
    return int.from_bytes(digest, "big", signed=True)


class SplitWords(Bolt):
    """Gets each line batch whole (its input is shuffle-grouped) as an Arrow table."""

    outputs = ["batch", "copy", "word"]

    def process_table(self, batch):
        table = batch.table
        words = split_words(table.column("line"))
        first = pc.min(table.column("offset")).as_py()
        name = batch_id(table.column("partition")[0].as_py(), first)
        self.emit_batch(
            {
                "batch": pa.repeat(pa.scalar(name, pa.int64()), len(words)),
                "copy": pa.repeat(pa.scalar(random.getrandbits(63), pa.int64()), len(words)),
                "word": words,
            }
        )


class CountWords(SparkBolt):
    outputs = ["batch", "copy", "word", "count"]

    def process_batch(self, df):
        return df.groupBy("batch", "copy", "word").count()


class WordCount(Topology):
    name = "wordcount"
    config = {
        "topology.workers": 3,
        "topology.batch.size": 20_000_000,  # words a Spark job takes at most
        "topology.batch.timeout.ms": 50,
    }

    lines = PartitionedFileSpout.spec(
        par=2, path=INPUT, group="wordcount", batch_lines=10_000, follow=FOLLOW
    )
    split = SplitWords.spec(inputs={lines: Grouping.shuffle}, par=2)
    count = CountWords.spec(inputs={split: Grouping.shuffle}, par=1)
    sink = IdempotentFileSink.spec(
        inputs={count: Grouping.fields("word")}, par=2, key_fields=["batch", "word"]
    )


def totals(output_dir: str | Path) -> Counter[str]:
    table = IdempotentFileSink.table(output_dir, "sink")
    if not table.num_rows:
        return Counter()
    sums = table.group_by("word").aggregate([("count", "sum")])
    return Counter(dict(zip(sums["word"].to_pylist(), sums["count_sum"].to_pylist(), strict=True)))


def plain_count(texts: list[str]) -> Counter[str]:
    separators = re.compile(SEPARATORS)
    return Counter(w for text in texts for w in separators.split(text.lower()) if w)


def verify(output_dir: str) -> int:
    """Compare the topology's totals with a plain Python count of the same text."""
    expected = plain_count([p.read_text() for p in sorted(Path(INPUT).iterdir())])
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
