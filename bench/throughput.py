"""Words per second: squall's word count against Spark Structured Streaming, same data,
same run, same machine.

Both count the words of generated text in PARTITIONS files. squall runs a local cluster
(ZooKeeper, nimbus, 2 supervisors); the topology is submitted inactive and the clock starts
when every task reports ready (workers up, SparkSessions started) and the topology is
activated, and stops when every word is counted (SparkSessions up and warmed by a small
job; the word-count query's first batch still compiles its code inside the clock).
Structured Streaming reads the same directory with trigger(availableNow) in local[2],
timed from query start to termination twice on one SparkSession: cold (its first query,
session start excluded) and warm (the same query again). Acking is off in the squall run,
matching Structured Streaming's lack of per-record tracking; the SparkBolt batch size is
the topology's topology.batch.size.

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


def all_ready(conf: dict, name: str) -> bool:
    from squall import zk as zk_mod
    from squall.records import WorkerBeat

    zk = zk_mod.connect(conf)
    try:
        lay = zk_mod.layout(conf)
        tid = next(t for t in zk.get_children(lay.storms) if t.startswith(f"{name}-"))
        beats = zk_mod.read_records(zk, WorkerBeat, lay.taskbeats(tid))
        tasks = zk.get_children(lay.tasks(tid))
        stats = {t: s for b in beats.values() for t, s in b.tasks.items()}
        return len(stats) == len(tasks) and all(s.get("ready") for s in stats.values())
    finally:
        zk.stop()
        zk.close()


def run_squall(data: Path, work: Path, words: int) -> float:
    from squall.local import LocalCluster, wait_for
    from squall.submit import submit_file

    os.environ["SQUALL_BENCH_INPUT"] = str(data)
    out = work / "out"
    with LocalCluster(work / "cluster", supervisors=2) as cluster:
        conf = cluster.client_conf()
        with cluster.client() as client:
            name = submit_file(
                client,
                HERE / "topologies" / "wordcount_bench.py",
                conf,
                overrides={"topology.output.dir": str(out)},
                inactive=True,
            )
            wait_for(lambda: all_ready(conf, name), 300, "every task ready")
            start = time.perf_counter()
            client.activate(name)

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


def run_structured_streaming(data: Path, work: Path, words: int) -> tuple[float, float]:
    """Seconds for the query on a fresh session (cold) and again on a warm one."""
    from pyspark.sql import SparkSession

    spark = (
        SparkSession.builder.master("local[2]")
        .appName("bench-structured-streaming")
        .config("spark.ui.enabled", "false")
        .config("spark.sql.shuffle.partitions", "2")
        .getOrCreate()
    )
    try:
        times = []
        for run in ("cold", "warm"):
            start = time.perf_counter()
            _count_words(spark, data, work / f"checkpoint-{run}", run)
            times.append(time.perf_counter() - start)
            total = spark.sql(f"select sum(`count`) from {run}").collect()[0][0]
            assert total == words, (total, words)
        return times[0], times[1]
    finally:
        spark.stop()


def _count_words(spark, data: Path, checkpoint: Path, name: str) -> None:
    from pyspark.sql import functions as F

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
        .queryName(name)
        .option("checkpointLocation", str(checkpoint))
        .trigger(availableNow=True)
        .start()
    )
    query.awaitTermination()


def main() -> None:
    lines = int(sys.argv[1]) if len(sys.argv) > 1 else 200_000
    with tempfile.TemporaryDirectory(prefix="squall-bench-") as tmp:
        work = Path(tmp)
        words = make_input(work / "data", lines)
        squall_s = run_squall(work / "data", work / "squall", words)
        cold_s, warm_s = run_structured_streaming(work / "data", work / "spark", words)
    print(f"# {platform.machine()}, {os.cpu_count()} cores, Python {platform.python_version()}")
    print(f"words: {words} in {lines} lines, {PARTITIONS} partitions")
    print(f"squall word count:            {squall_s:7.1f} s  {words / squall_s:10.0f} words/s")
    for label, secs in (("cold", cold_s), ("warm", warm_s)):
        print(
            f"Structured Streaming, {label}:   {secs:7.1f} s  {words / secs:10.0f} words/s"
            f"   ratio squall / it: {secs / squall_s:.2f}"
        )


if __name__ == "__main__":
    main()
