"""Words per second: squall's word count against Spark Structured Streaming, same data,
same run, same machine.

Both count the words of generated text in PARTITIONS files. squall runs a local cluster
(ZooKeeper, nimbus, 2 supervisors) and is timed from submit until every word is counted
(worker start-up and Spark session start included). Structured Streaming reads the same
directory with trigger(availableNow) in local[2], timed from query start to termination
(its SparkSession is created before the clock starts). Acking is off in the squall run,
matching Structured Streaming's lack of per-record tracking.

Run: .venv/bin/python bench/throughput.py [lines]
"""

from __future__ import annotations

import json
import os
import platform
import random
import sys
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).parent
PARTITIONS = 4
VOCABULARY = [f"w{i}" for i in range(500)]


def make_input(directory: Path, lines: int) -> int:
    rng = random.Random(1)
    directory.mkdir(parents=True)
    words = 0
    per = lines // PARTITIONS
    for p in range(PARTITIONS):
        rows = [" ".join(rng.choices(VOCABULARY, k=10)) for _ in range(per)]
        words += 10 * per
        (directory / f"part-{p}").write_text("\n".join(rows) + "\n")
    return words


def run_squall(data: Path, work: Path, words: int) -> float:
    from squall.local import LocalCluster, wait_for
    from squall.submit import submit_file

    os.environ["SQUALL_BENCH_INPUT"] = str(data)
    out = work / "out"
    with LocalCluster(work / "cluster", supervisors=2) as cluster:
        start = time.perf_counter()
        with cluster.client() as client:
            submit_file(
                client,
                HERE / "topologies" / "wordcount_bench.py",
                cluster.client_conf(),
                overrides={"topology.output.dir": str(out)},
            )

        def counted() -> bool:
            total = 0
            for path in out.glob("totals-*.json"):
                try:
                    total += sum(json.loads(path.read_text()).values())
                except ValueError:
                    return False
            return total == words

        wait_for(counted, 1800, "every word counted", interval=0.2)
        return time.perf_counter() - start


def run_structured_streaming(data: Path, work: Path, words: int) -> float:
    from pyspark.sql import SparkSession
    from pyspark.sql import functions as F

    spark = (
        SparkSession.builder.master("local[2]")
        .appName("bench-structured-streaming")
        .config("spark.ui.enabled", "false")
        .config("spark.sql.shuffle.partitions", "2")
        .getOrCreate()
    )
    try:
        start = time.perf_counter()
        lines = spark.readStream.text(str(data))
        counts = (
            lines.select(F.explode(F.split(F.lower("value"), "[^a-z0-9']+")).alias("word"))
            .where(F.col("word") != "")
            .groupBy("word")
            .count()
        )
        query = (
            counts.writeStream.outputMode("complete")
            .format("memory")
            .queryName("wordcounts")
            .option("checkpointLocation", str(work / "checkpoint"))
            .trigger(availableNow=True)
            .start()
        )
        query.awaitTermination()
        elapsed = time.perf_counter() - start
        total = spark.sql("select sum(`count`) from wordcounts").collect()[0][0]
        assert total == words, (total, words)
        return elapsed
    finally:
        spark.stop()


def main() -> None:
    lines = int(sys.argv[1]) if len(sys.argv) > 1 else 40_000
    with tempfile.TemporaryDirectory(prefix="squall-bench-") as tmp:
        work = Path(tmp)
        words = make_input(work / "data", lines)
        squall_s = run_squall(work / "data", work / "squall", words)
        spark_s = run_structured_streaming(work / "data", work / "spark", words)
    print(f"# {platform.machine()}, {os.cpu_count()} cores, Python {platform.python_version()}")
    print(f"words: {words} in {lines} lines, {PARTITIONS} partitions")
    print(f"squall word count:            {squall_s:7.1f} s  {words / squall_s:10.0f} words/s")
    print(f"Structured Streaming (local): {spark_s:7.1f} s  {words / spark_s:10.0f} words/s")
    print(f"ratio squall / Structured Streaming: {spark_s / squall_s:.2f}")


if __name__ == "__main__":
    main()
