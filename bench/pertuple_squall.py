"""One squall case of bench/pertuple.py on a running LocalCluster: submit the topology of
bench/pertuple_topology.py inactive, activate it once every task is ready, warm up, measure
over a window, kill it and wait until its workers are gone. The figures come from the
progress lines of the topology's spout and counting tasks (bench/progress_log.py) over the
window, and from /proc for the workers' CPU and RSS (bench/worker_usage.py). Every wait
has a deadline (--start-timeout), so a case that hangs fails instead of the bench."""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import signal
import subprocess
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from pertuple_stats import percentile, rate_between, samples_between
from progress_log import read_progress
from worker_usage import WorkerUsage

TOPOLOGY = Path(__file__).resolve().parent / "pertuple_topology.py"
# rounds of the topology's busy() per tuple in the middle bolt of the work cases: ~40 us of
# Python on the development machine, inside the 20-50 us issue 39 asks for (the timing is in
# bench/RESULTS.md's current-figures table)
WORK_ROUNDS = 500

# name -> (label, settings of the topology, topology conf overrides)
CASES: dict[str, tuple[str, dict[str, Any], dict[str, Any]]] = {
    "ack1": ("squall, acking, 1 worker", {"tracked": True}, {"topology.workers": 1}),
    "ack2": (
        "squall, acking, 2 workers, a spout each",
        {"tracked": True, "spouts": 2},
        {"topology.workers": 2},
    ),
    "ack2-near": (  # not run unless named (CEILINGS)
        "squall, acking, 2 workers, nothing crosses: counted local_or_shuffle (a ceiling)",
        {"tracked": True, "spouts": 2, "counted_by": "local_or_shuffle"},
        {"topology.workers": 2},
    ),
    "work1": (
        "squall, acking, 1 spout, ~40 us bolt, 1 worker",
        {"tracked": True, "work": WORK_ROUNDS},
        {"topology.workers": 1},
    ),
    "work2": (
        "squall, acking, 1 spout, ~40 us bolt, 2 workers",
        {"tracked": True, "work": WORK_ROUNDS},
        {"topology.workers": 2},
    ),
    "work2-near": (  # not run unless named (CEILINGS)
        "squall, acking, ~40 us bolt, 2 workers, nothing crosses: a spout each, counted "
        "local_or_shuffle (a ceiling)",
        {"tracked": True, "work": WORK_ROUNDS, "spouts": 2, "counted_by": "local_or_shuffle"},
        {"topology.workers": 2},
    ),
    "work2-rr": (  # not run unless named (CEILINGS)
        "squall, acking, 1 spout, ~40 us bolt, 2 workers, shuffle round robin",
        {"tracked": True, "work": WORK_ROUNDS},
        {"topology.workers": 2, "topology.disable.loadaware.messaging": True},
    ),
    "noack1": (
        "squall, no acking, 1 worker",
        {"tracked": False},
        {"topology.workers": 1, "topology.acker.executors": 0},
    ),
    "batch": (
        "squall, emit_batch of 1000 rows, 1 worker",
        {"tracked": True, "batch": 1000},
        {"topology.workers": 1},
    ),
}
# what two workers do when no tuple or ack crosses between them (the counter takes its words
# local_or_shuffle, so each worker counts a share of every word: not a word count): the
# ceiling of ack2 on this machine, whatever the transport costs
# work2-near: the work case as two workers that share nothing (each its own spout, counting
# its own words): what two workers of this machine do when crossing costs nothing, the
# ceiling of work2 (issue 39)
# work2-rr: the work case with load-aware shuffle off, each bolt task getting its share of the
# spout's tuples wherever it runs: load-aware shuffle keeps them in the spout's worker while
# its queue has room, and topology.max.spout.pending keeps that queue short (issue 39)
CEILINGS = ("ack2-near", "work2-near", "work2-rr")


def run_case(cluster: Any, case: str, args: argparse.Namespace, number: int) -> dict[str, Any]:
    """One squall case on a running cluster: submit, wait ready, activate, measure, kill."""
    from readiness import all_ready

    from squall import thrift_api as T
    from squall.local import wait_for
    from squall.submit import submit_file

    label, settings, overrides = CASES[case]
    settings = {**settings, "rate": args.rate or 0, "par": args.par}
    out = cluster.directory / f"out-{case}-{number}"
    name = f"pertuple-{case}-{number}"
    conf = cluster.client_conf()
    os.environ["SQUALL_BENCH_PERTUPLE"] = json.dumps(settings)  # read by the topology at submit
    supervisors = [p.pid for n, p in cluster.processes.items() if n.startswith("supervisor")]
    with cluster.client() as client:  # a client per call: nimbus closes idle connections
        submit_file(
            client,
            TOPOLOGY,
            conf,
            name=name,
            overrides={**args.conf, **overrides, "topology.output.dir": str(out)},
            inactive=True,
        )
    try:
        wait_for(lambda: all_ready(conf, name), args.start_timeout, f"{name} ready")
        usage = WorkerUsage(supervisors)
        _check_path(usage.pids())
        with cluster.client() as client:
            client.activate(name)
        wait_for(
            lambda: any(r["counted"] for r in read_progress(out, "count")),
            args.start_timeout,
            f"{name}'s first counted tuple",
        )
        time.sleep(args.warmup)
        t0 = time.time()
        usage.start()
        soak = args.soak if case == "noack1" and args.soak else 0
        with perf_record(usage.pids(), args.perf, f"{case}-{number}"):
            rss_series = usage.sample_rss(soak or args.measure, args.rss_every, args.rss_stop)
        t1 = time.time()
        cpu_pct, cpu_each = usage.cpu_pct(), usage.cpu_pct_each()
        wait_for(
            lambda: all(r[-1]["t"] > t1 for r in _by_task(read_progress(out, "*"))),
            args.start_timeout,
            f"{name}'s progress lines past the window",
        )
    finally:
        with cluster.client() as client:
            client.killTopologyWithOpts(name, T.KillOptions(wait_secs=0))
        wait_for(lambda: not WorkerUsage(supervisors).pids(), args.start_timeout, "workers gone")
    counts, spouts = read_progress(out, "count"), read_progress(out, "spout")
    row: dict[str, Any] = {
        "case": case,
        "system": label,
        "rate": sum(rate_between(r, "counted", t0, t1) for r in _by_task(counts)),
        "emitted_rate": sum(rate_between(r, "emitted", t0, t1) for r in _by_task(spouts)),
        "cpu_pct": cpu_pct,
        "cpu_each": cpu_each,
        "rss_mib": max(rss_series),
        "window_s": t1 - t0,
    }
    if settings.get("work"):
        row.update(busy_speed(read_progress(out, "work"), t0, t1, row["rate"]))
    if settings["tracked"]:
        latencies = samples_between(spouts, "latency_ms", t0, t1)
        row["latency_kind"] = "complete"
        row["failed"] = sum(r[-1]["failed"] for r in _by_task(spouts))
    else:
        latencies = samples_between(counts, "lag_ms", t0, t1)
        row["latency_kind"] = "lag"
        row["lag_start_ms"] = percentile(samples_between(counts, "lag_ms", t0, t0 + 1.0), 50)
        row["lag_end_ms"] = percentile(samples_between(counts, "lag_ms", t1 - 1.0, t1), 50)
    row["p50_ms"] = percentile(latencies, 50)
    row["p99_ms"] = percentile(latencies, 99)
    if soak:
        row["rss_series_mib"] = rss_series
    return row


def busy_speed(works: list[dict[str, Any]], t0: float, t1: float, rate: float) -> dict[str, float]:
    """The work bolts' mean CPU time per busy() call over the window (pertuple_topology's
    WorkBolt times every 64th), and the rate at equal speed: tuples/s times it, a figure
    whose ratio between two cases is theirs with this machine's speed the same in both."""
    tasks = _by_task(works)
    timed = sum(rate_between(r, "timed", t0, t1) for r in tasks)
    seconds = sum(rate_between(r, "busy_s", t0, t1) for r in tasks)
    busy_us = seconds / timed * 1e6 if timed else 0.0
    return {"busy_us": busy_us, "rate_at_equal_speed": rate * busy_us}


@contextlib.contextmanager
def perf_record(pids: list[int], directory: Path | None, name: str) -> Iterator[None]:
    """perf sampling the workers' call stacks (DWARF: mypyc's functions by name) while the
    block runs, to directory/name.data; nothing when directory is None."""
    if directory is None:
        yield
        return
    directory.mkdir(parents=True, exist_ok=True)
    command = ["perf", "record", "-F", "249", "--call-graph", "dwarf,16384", "-q"]
    command += ["-p", ",".join(map(str, pids)), "-o", str(directory / f"{name}.data")]
    perf = subprocess.Popen(command, stdout=subprocess.DEVNULL)
    try:
        yield
    finally:
        perf.send_signal(signal.SIGINT)  # perf writes its file and exits
        perf.wait(120)


def _check_path(pids: list[int]) -> None:
    """Every worker runs the per-tuple path this process runs (the installed one): a worker
    of an older supervisor, or one whose environment sets SQUALL_PURE, would not."""
    from squall.hot_path import runs_compiled, select

    compiled = select().compiled
    other = [pid for pid in pids if runs_compiled(pid) is not compiled]
    if other:
        path = "compiled" if compiled else "interpreted"
        raise RuntimeError(f"workers {other} do not run the per-tuple path {path}")


def _by_task(records: list[dict[str, Any]]) -> list[list[dict[str, Any]]]:
    tasks: dict[str, list[dict[str, Any]]] = {}
    for r in records:
        tasks.setdefault(r["file"], []).append(r)
    return list(tasks.values())
