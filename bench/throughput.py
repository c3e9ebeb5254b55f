"""Words per second: examples/wordcount.py against Spark Structured Streaming, same data,
same run, same machine.

Both count the words of generated text in PARTITIONS files (lower-cased, split on runs of
characters other than letters, digits and apostrophes), and both results are checked word by
word against a plain Python count. squall runs the example as it is in the repository, with
one worker: line batches split and counted per batch with pyarrow in the worker, the partial
counts summed per word by a Spark job per micro-batch, a file sink. Structured Streaming
runs the whole count in Spark (where its own partial aggregation happens inside the job):
local[2], trigger availableNow, memory sink, complete mode, 2 shuffle partitions. Two passes
each:

- first: squall's first pass over the data, timed from activation (workers up, every task
  ready, SparkSessions started and warmed by one tiny job) until every word is in the sink;
  Structured Streaming's first query on a session warmed by the same tiny job, timed from
  query start to termination. Both include compiling the query and warming the JVM's JIT.
- warm: squall counts another, equally large chunk appended to the same partition files by
  the running topology (the example's follow mode); Structured Streaming runs the query
  again on its session. This is repeated WARM_RUNS times and the median is reported (the
  spread is printed too: on a shared 2-core machine single runs vary by 20-30%).

Run: .venv/bin/python bench/throughput.py [lines] [workers] [vocabulary] [example]
(lines per pass, 200,000 by default; squall workers, 1; vocabulary: 500, the default, draws
500 words uniformly, any other size draws that many words by Zipf's law, as natural text
has them; example: wordcount, the default, or exact_wordcount)
"""

from __future__ import annotations

import importlib.util
import itertools
import os
import platform
import random
import statistics
import sys
import tempfile
import time
from collections import Counter
from pathlib import Path

from readiness import all_ready

EXAMPLES = Path(__file__).parents[1] / "examples"
EXAMPLE = EXAMPLES / "wordcount.py"
PARTITIONS = 4
WARM_RUNS = 3


def vocabulary(size: int) -> tuple[list[str], list[float] | None]:
    """500 words drawn uniformly (as every figure before the Zipf runs), or `size` words
    drawn by Zipf's law like the words of natural text (a few frequent, a long tail)."""
    words = [f"w{i}" for i in range(size)]
    if size == 500:
        return words, None
    return words, list(itertools.accumulate(1 / rank for rank in range(1, size + 1)))


def example_module():
    spec = importlib.util.spec_from_file_location("wordcount_example", EXAMPLE)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def make_text(lines: int, seed: int, words: tuple[list[str], list[float] | None]) -> list[str]:
    """Text per partition: `lines` lines of 10 words in all."""
    rng = random.Random(seed)
    per = lines // PARTITIONS
    return [
        "".join(
            " ".join(rng.choices(words[0], cum_weights=words[1], k=10)) + "\n" for _ in range(per)
        )
        for _ in range(PARTITIONS)
    ]


def write(directory: Path, texts: list[str], mode: str = "w") -> None:
    directory.mkdir(parents=True, exist_ok=True)
    for p, text in enumerate(texts):
        with (directory / f"part-{p}").open(mode) as f:
            f.write(text)


class SinkWords:
    """Words in the sink so far, summed again only when a sink file has grown (a poll every
    50 ms must not take a core from the run it measures). Copies of a replayed batch would
    count twice here; the exact check after the clock stops reads the sink as the example
    does."""

    def __init__(self, out: Path) -> None:
        self.out = out
        self.sizes: dict[Path, int] = {}
        self.words = 0

    def count(self) -> int:
        import pyarrow.compute as pc

        from squall.sinks import FileSink

        sizes = {path: path.stat().st_size for path in self.out.glob("sink-*.arrows")}
        if sizes != self.sizes:
            self.sizes = sizes
            table = FileSink.table(self.out, "sink")
            self.words = pc.sum(table.column("count")).as_py() if table.num_rows else 0
        return self.words


def run_squall(work: Path, passes: list[list[str]], workers: int, topology: Path) -> list[float]:
    from squall.local import LocalCluster, wait_for
    from squall.submit import submit_file

    data, out = work / "data", work / "out"
    write(data, passes[0])
    os.environ["SQUALL_WORDCOUNT_INPUT"] = str(data)  # read by the example at submit
    os.environ["SQUALL_WORDCOUNT_FOLLOW"] = "1"
    wordcount = example_module()
    sink = SinkWords(out)
    seconds = []
    with LocalCluster(work / "cluster", supervisors=1) as cluster:
        conf = cluster.client_conf()
        with cluster.client() as client:
            name = submit_file(
                client,
                topology,
                conf,
                overrides={"topology.output.dir": str(out), "topology.workers": workers},
                inactive=True,
            )
            wait_for(lambda: all_ready(conf, name), 300, "every task ready")
            expected: Counter[str] = Counter()
            for number, texts in enumerate(passes):
                expected += wordcount.plain_count(texts)
                words = expected.total()
                start = time.perf_counter()
                if number == 0:
                    client.activate(name)
                else:
                    write(data, texts, mode="a")
                wait_for(lambda w=words: sink.count() >= w, 1800, "every word counted", 0.05)
                seconds.append(time.perf_counter() - start)
                assert wordcount.totals(out) == expected, "squall's counts differ"
    return seconds


def run_structured_streaming(work: Path, texts: list[str]) -> list[float]:
    """Seconds for the query's first run on a session and for a second run."""
    from pyspark.sql import SparkSession

    data = work / "data"
    write(data, texts)
    wordcount = example_module()
    expected = wordcount.plain_count(texts)
    spark = (
        SparkSession.builder.master("local[2]")
        .appName("bench-structured-streaming")
        .config("spark.ui.enabled", "false")
        .config("spark.sql.shuffle.partitions", "2")
        .config("spark.driver.memory", "512m")
        .getOrCreate()
    )
    try:
        import pyarrow as pa

        # the same warm-up squall's workers run before they report ready (worker/spark.py)
        spark.createDataFrame(pa.table({"x": [1, 2, 2]})).groupBy("x").count().collect()
        times = []
        for run in ["first"] + [f"warm{i}" for i in range(WARM_RUNS)]:
            start = time.perf_counter()
            _count_words(spark, data, work / f"checkpoint-{run}", run, wordcount.SEPARATORS)
            times.append(time.perf_counter() - start)
            got = {r["word"]: r["count"] for r in spark.sql(f"select * from {run}").collect()}
            assert got == expected, "Structured Streaming's counts differ from a plain count"
        return times
    finally:
        spark.stop()


def _count_words(spark, data: Path, checkpoint: Path, name: str, separators: str) -> None:
    from pyspark.sql import functions as F

    lines = spark.readStream.text(str(data))
    counts = (
        lines.select(F.explode(F.split(F.lower("value"), separators)).alias("word"))
        .where(F.col("word") != "")
        .groupBy("word")
        .count()
    )
    query = (
        counts.writeStream.outputMode("complete")
        .format("memory")
        .queryName(name)
        .option("checkpointLocation", str(checkpoint))
        .trigger(availableNow=True)
        .start()
    )
    query.awaitTermination()


def main() -> None:
    lines = int(sys.argv[1]) if len(sys.argv) > 1 else 200_000
    workers = int(sys.argv[2]) if len(sys.argv) > 2 else 1
    size = int(sys.argv[3]) if len(sys.argv) > 3 else 500
    topology = EXAMPLES / f"{sys.argv[4] if len(sys.argv) > 4 else 'wordcount'}.py"
    passes = [make_text(lines, seed, vocabulary(size)) for seed in range(1, WARM_RUNS + 2)]
    words = 10 * (lines // PARTITIONS) * PARTITIONS
    with tempfile.TemporaryDirectory(prefix="squall-bench-") as tmp:
        squall_s = run_squall(Path(tmp) / "squall", passes, workers, topology)
        spark_s = run_structured_streaming(Path(tmp) / "spark", passes[0])
    print(f"# {platform.machine()}, {os.cpu_count()} cores, Python {platform.python_version()}")
    print(
        f"words per pass: {words} in {lines} lines, {PARTITIONS} partitions; "
        f"squall: {topology.name}, {workers} worker(s); vocabulary: {size} words"
        + (" uniform" if size == 500 else " Zipf")
    )
    report("first", squall_s[0], spark_s[0], words)
    report("warm", statistics.median(squall_s[1:]), statistics.median(spark_s[1:]), words)
    for name, runs in (("squall", squall_s[1:]), ("Structured Streaming", spark_s[1:])):
        print(f"       {name} warm runs: {', '.join(f'{s:.1f}' for s in runs)} s")


def report(label: str, squall_s: float, spark_s: float, words: int) -> None:
    print(
        f"{label:>5}: squall {squall_s:6.1f} s {words / squall_s:9.0f} words/s | "
        f"Structured Streaming {spark_s:6.1f} s {words / spark_s:9.0f} words/s | "
        f"ratio {spark_s / squall_s:.2f}"
    )


if __name__ == "__main__":
    main()
