"""Seconds from submit to the first output of examples/wordcount.py on a running local
cluster (one supervisor), with and without the supervisor's warm Spark Connect server.

- cold: supervisor.spark.connect.enable false; the SparkBolt's worker starts a SparkSession
  of its own (a JVM) on every submission.
- warm: the supervisor's server is up and warmed before the first submission; the worker
  opens a Connect session on it. The server's own start (its JVM's start to READY, warmed)
  is printed once per run.

"First output" is the first non-empty file the word count's sink writes; "done" is the
topology's input processed (squall.local.wait_until_quiet) and the counts checked exact.
Each round submits, measures, kills and waits until the topology's workers are gone.

Run: .venv/bin/python bench/startup.py [--rounds 3] [--modes cold,warm]
"""

from __future__ import annotations

import argparse
import importlib.util
import os
import platform
import statistics
import tempfile
import time
from pathlib import Path

from kazoo.exceptions import NoNodeError

from squall import spark_connect as sc
from squall import thrift_api as T
from squall.local import LocalCluster, topology_id, wait_for, wait_until_quiet
from squall.submit import submit_file
from squall.zk import connection as zk_mod

EXAMPLE = Path(__file__).parents[1] / "examples" / "wordcount.py"


def _wordcount():
    spec = importlib.util.spec_from_file_location("wc_bench", EXAMPLE)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def _first_output(out: Path) -> bool:
    return any(p.is_file() and p.stat().st_size > 0 for p in out.rglob("*.arrows"))


def forget_offsets(cluster: LocalCluster) -> None:
    """The word count's spouts commit their offsets to ZooKeeper under their consumer group,
    which outlives the topology: the next submission would find its input done."""
    zk = cluster.zk_client("nimbus", "supervisor")
    try:
        zk.delete(
            f"{zk_mod.layout(cluster.client_conf()).consumers_root}/wordcount", recursive=True
        )
    except NoNodeError:
        pass
    finally:
        zk.stop()
        zk.close()


def one_round(cluster: LocalCluster, out: Path, wc) -> tuple[float, float]:
    conf = cluster.client_conf()
    started = time.monotonic()
    with cluster.client() as client:
        name = submit_file(client, EXAMPLE, conf, overrides={"topology.output.dir": str(out)})
        tid = topology_id(client, name)
    wait_for(lambda: _first_output(out), 300, "the first output", interval=0.05)
    first = time.monotonic() - started
    wait_until_quiet(conf, tid, 300)
    done = time.monotonic() - started
    expected = wc.plain_count([p.read_text() for p in sorted(Path(wc.INPUT).iterdir())])
    if wc.totals(out) != expected:
        raise SystemExit(f"word count not exact in {out}")
    with cluster.client() as client:
        client.killTopologyWithOpts(name, T.KillOptions(wait_secs=0))
    workers = cluster.directory / "supervisor1" / "supervisor" / "workers"
    wait_for(lambda: not list(workers.glob("*.pid")), 60, "the workers to stop")
    forget_offsets(cluster)
    return first, done


def server_start(server: Path) -> float:
    """Seconds from the server's JVM start to its READY state: the process's start time
    (/proc: clock ticks after boot) to the state file's last write, which is READY's."""
    state = sc.read_state(server)
    assert state is not None and state.state == sc.READY
    ticks = os.sysconf("SC_CLK_TCK")
    fields = Path(f"/proc/{state.pid}/stat").read_text().rpartition(")")[2].split()
    boot = next(
        float(line.split()[1])
        for line in Path("/proc/stat").read_text().splitlines()
        if line.startswith("btime ")
    )
    started = boot + int(fields[19]) / ticks  # field 22 of stat: starttime
    return sc.state_file(server).stat().st_mtime - started


def run_mode(mode: str, rounds: int, wc) -> list[tuple[float, float]]:
    with tempfile.TemporaryDirectory(prefix=f"squall-startup-{mode}-") as tmp:
        conf = {sc.ENABLE: mode == "warm"}
        with LocalCluster(Path(tmp), supervisors=1, conf=conf) as cluster:
            if mode == "warm":
                server = cluster.directory / "supervisor1" / "supervisor" / "spark-connect"

                def ready() -> bool:
                    state = sc.read_state(server)
                    if state and state.state == sc.FAILED:
                        raise SystemExit(f"the Spark Connect server failed: {state.reason}")
                    return bool(state and state.state == sc.READY)

                wait_for(ready, 180, "the supervisor's Spark Connect server")
                print(
                    f"warm: the Spark Connect server was ready {server_start(server):.1f}s "
                    "after its JVM started (listening and warmed with two jobs)"
                )
            results = []
            for i in range(rounds):
                first, done = one_round(cluster, Path(tmp) / f"out-{i}", wc)
                print(f"{mode} round {i + 1}: first output {first:.1f}s, done {done:.1f}s")
                results.append((first, done))
            return results


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--modes", default="cold,warm")
    args = parser.parse_args()
    wc = _wordcount()
    print(f"{platform.processor() or platform.machine()}, {os.cpu_count()} cores")
    print(f"load average at start: {os.getloadavg()[0]:.1f}")
    table = {}
    for mode in args.modes.split(","):
        table[mode] = run_mode(mode, args.rounds, wc)
    print("\n| mode | first output, median (all) | input done, median |")
    print("|---|---|---|")
    for mode, rows in table.items():
        firsts = [f for f, _ in rows]
        dones = [d for _, d in rows]
        every = ", ".join(f"{f:.1f}" for f in firsts)
        median_first = statistics.median(firsts)
        print(f"| {mode} | {median_first:.1f} s ({every}) | {statistics.median(dones):.1f} s |")
    print(f"load average at end: {os.getloadavg()[0]:.1f}")


if __name__ == "__main__":
    main()
