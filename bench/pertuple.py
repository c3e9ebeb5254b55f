"""squall's per-tuple path against Bytewax and a plain Python loop, back to back (issue #16,
item 5): words -> shuffle -> upper-case bolt -> fields grouping on the word -> counting bolt.

    .venv/bin/python bench/pertuple.py [--rounds 3] [--json]     # the whole table
    .venv/bin/python bench/pertuple.py --rate 2000                # acking, 1 worker, at 2000/s
    .venv/bin/python bench/pertuple.py --half                     # the max, then half of it
    .venv/bin/python bench/pertuple.py --soak 300                 # acking off, RSS for 5 min
    .venv/bin/python bench/pertuple.py --cases ack1,batch         # some cases only
    .venv/bin/python bench/pertuple.py --set topology.max.spout.pending=100   # any conf
    .venv/bin/python bench/pertuple.py --cases ack2 --perf prof/  # perf on the workers
    .venv/bin/python bench/pertuple.py --cases ack2,ack2-near     # two workers, and with
                                                  # nothing crossing between them (a ceiling)
    .venv/bin/python bench/pertuple.py --cases work1,work2,work2-rr --others ''  # scaling

squall runs on a real LocalCluster (ZooKeeper, nimbus, one supervisor, workers; security on as
by default), one per round, the topology of bench/pertuple_topology.py submitted once per case
(bench/pertuple_squall.py): acking on with 1 and 2 workers, acking off with 1 worker,
emit_batch of 1000 rows with 1 worker, and the scaling cases (issue #39): one spout, the
middle bolt doing ~40 us of Python per tuple, on 1 and on 2 workers. Each is measured over a
window after a warm-up from the progress lines its spout and counting tasks write: tuples
counted per second at the counting bolt (the rate), the spout's complete latency p50/p99 (emit
to ack or fail), for acking off the emit-to-count lag; worker CPU and RSS from /proc. Bytewax
0.21 (pip install '.[bench]') and the plain loop run in their own processes
(bench/pertuple_others.py). Figures are medians of --rounds; ratios are squall over Bytewax,
of the rates and of the tuples per CPU-second (on a shared machine each process's rate follows
the share of a core it got; the second ratio does not). With several rounds, each case's ratio
within each round is printed too, and its median: a round runs squall and Bytewax minutes
apart, so these drift less with this machine's load (Bytewax alone ran at 34-54k items/s
within an hour).

Scaling is printed as ratios of cases of one round (work2 over work1: the rate, the rate at
equal busy() speed and tuples per CPU-second; ack2 over ack1: tuples per CPU-second, the cost
of crossing between workers), with each worker's CPU: a saturated worker beside an idling one
is the bottleneck. The rate at equal speed multiplies each work case's rate by the CPU time of
its busy() calls (every 64th is timed): on a machine whose speed moves from second to second,
cases a minute apart differ by more than any change to squall; at equal speed they do not.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

from pertuple_squall import CASES, CEILINGS, run_case
from pertuple_stats import median_row, per_cpu_second, ratio, table

BENCH = Path(__file__).resolve().parent

OTHERS = {
    "bytewax-item": ("Bytewax 0.21, 1 worker, item at a time", 500_000),
    "bytewax-batch": ("Bytewax, batches of 1000", 2_000_000),
    "loop": ("plain Python loop, same work", 5_000_000),
}


def run_other(case: str, timeout: float) -> dict[str, Any]:
    label, tuples = OTHERS[case]
    done = subprocess.run(
        [sys.executable, str(BENCH / "pertuple_others.py"), case, str(tuples)],
        capture_output=True,
        text=True,
        timeout=timeout,
    )
    if done.returncode:  # e.g. Bytewax not installed: pip install -e '.[bench]'
        last = (done.stderr.strip().splitlines() or ["no output"])[-1]
        raise RuntimeError(f"{case} exited {done.returncode}: {last}")
    return {"case": case, "system": label, **json.loads(done.stdout.strip().splitlines()[-1])}


def run_round(cases: list[str], args: argparse.Namespace, number: int) -> list[dict[str, Any]]:
    from squall.local import LocalCluster

    rows: list[dict[str, Any]] = []
    if cases:
        try:
            with (
                tempfile.TemporaryDirectory(prefix="squall-pertuple-") as tmp,
                LocalCluster(Path(tmp), supervisors=1, slots_per_supervisor=2) as cluster,
            ):
                for case in cases:
                    label = CASES[case][0]
                    rows.append(_attempt(case, label, run_case, cluster, case, args, number))
        except Exception as exc:  # noqa: BLE001 - the cluster did not come up: each case says so
            done = {r["case"] for r in rows}
            rows += [_attempt(c, CASES[c][0], _raise, exc) for c in cases if c not in done]
    for case in args.others:
        rows.append(_attempt(case, OTHERS[case][0], run_other, case, args.other_timeout))
    return rows


def _raise(exc: Exception) -> dict[str, Any]:
    raise exc


def _attempt(case: str, label: str, run: Any, *args: Any) -> dict[str, Any]:
    """One case's row; a case that fails (or runs past its bounds) is a row with its error,
    and the bench goes on with the next."""
    try:
        row = run(*args)
    except Exception as exc:  # noqa: BLE001 - reported in the table, the others still run
        row = {"case": case, "system": label, "rate": None, "error": f"{type(exc).__name__}: {exc}"}
    row["per_cpu_s"] = per_cpu_second(row["rate"], row.get("cpu_pct"))
    shown = "-" if row["rate"] is None else f"{row['rate']:,.0f}"
    print(f"  {label}: {shown} tuples/s {row.get('error', '')}", file=sys.stderr, flush=True)
    return row


BASE = {  # what each case is compared with
    "ack1": "bytewax-item",
    "ack2": "bytewax-item",
    "ack2-near": "bytewax-item",
    "noack1": "bytewax-item",
    "batch": "bytewax-batch",
}


def with_ratios(rows: list[dict[str, Any]]) -> list[dict[str, Any]]:
    rates = {r["case"]: r["rate"] for r in rows}
    per_cpu = {r["case"]: r.get("per_cpu_s") for r in rows}
    return [
        {
            **r,
            "vs_bytewax": ratio(r["rate"], rates.get(BASE.get(r["case"], ""))),
            "vs_bytewax_cpu": ratio(r.get("per_cpu_s"), per_cpu.get(BASE.get(r["case"], ""))),
        }
        for r in rows
    ]


def round_ratios(rounds: list[list[dict[str, Any]]], case: str) -> list[float]:
    """`case` over its Bytewax case within each round: the two ran minutes apart, so these
    vary less with this machine's load than the ratio of the medians does."""
    rows = [r for rows in rounds for r in with_ratios(rows) if r["case"] == case]
    return [r["vs_bytewax"] for r in rows if r["vs_bytewax"] is not None]


SCALING = (  # (more workers, one worker, what is compared): printed as ratios in one round
    ("work2", "work1", "rate"),
    ("work2", "work1", "rate_at_equal_speed"),
    ("work2", "work1", "per_cpu_s"),
    ("work2-near", "work1", "rate"),
    ("work2-near", "work1", "rate_at_equal_speed"),
    ("work2-rr", "work1", "rate"),
    ("work2-rr", "work1", "per_cpu_s"),
    ("ack2", "ack1", "per_cpu_s"),
)


WHAT = {
    "rate": "tuples/s",
    "rate_at_equal_speed": "tuples/s at equal busy() speed",
    "per_cpu_s": "tuples per CPU-second",
}


def scaling_lines(rounds: list[list[dict[str, Any]]]) -> list[str]:
    """Each SCALING ratio round by round (both cases ran in one cluster, a minute apart),
    and its median."""
    lines = []
    for more, one, key in SCALING:
        ratios = []
        for rows in rounds:
            by_case = {r["case"]: r for r in rows}
            if more in by_case and one in by_case:
                value = ratio(by_case[more].get(key), by_case[one].get(key))
                if value is not None:
                    ratios.append(value)
        if ratios:
            listed = ", ".join(f"{v:.2f}x" for v in ratios)
            what = WHAT[key]
            median = statistics.median(ratios)
            lines.append(f"  {more} over {one}, {what}: {listed} (median {median:.2f}x)")
    return lines


def medians(rounds: list[list[dict[str, Any]]]) -> list[dict[str, Any]]:
    by_case: dict[str, list[dict[str, Any]]] = {}
    for rows in rounds:
        for r in rows:
            by_case.setdefault(r["case"], []).append(r)
    return [median_row(rs) for rs in by_case.values()]


def conf_setting(parser: argparse.ArgumentParser, item: str) -> tuple[str, Any]:
    import yaml

    key, sep, value = item.partition("=")
    if not sep or not key:
        parser.error(f"--set takes KEY=VALUE, not {item!r}")
    return key.strip(), yaml.safe_load(value)


def parse_args(argv: list[str] | None = None) -> argparse.Namespace:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawTextHelpFormatter)
    p.add_argument("--rounds", type=int, default=3)
    p.add_argument("--json", action="store_true", help="print JSON instead of the table")
    p.add_argument(
        "--cases",
        default=",".join(c for c in CASES if c not in CEILINGS),
        help=f"squall cases, comma-separated (also {', '.join(CEILINGS)})",
    )
    p.add_argument("--others", default=",".join(OTHERS), help="Bytewax and loop cases")
    p.add_argument("--rate", type=float, default=0, help="throttle the spout (acking, 1 worker)")
    p.add_argument("--half", action="store_true", help="measure the max rate, then run at half")
    p.add_argument("--soak", type=float, default=0, help="seconds of acking off, RSS sampled")
    p.add_argument("--par", type=int, default=2, help="tasks of each bolt")
    p.add_argument(
        "--set",
        action="append",
        default=[],
        metavar="KEY=VALUE",
        help="topology conf for every squall case (YAML value), e.g. "
        "--set topology.max.spout.pending=100; a case's own keys win",
    )
    p.add_argument("--warmup", type=float, default=5.0, help="seconds before the window")
    p.add_argument("--measure", type=float, default=10.0, help="seconds of the window")
    p.add_argument("--rss-every", type=float, default=1.0, help="seconds between RSS samples")
    p.add_argument("--rss-bound", type=float, help="MiB the workers' RSS should stay under")
    p.add_argument("--rss-stop", type=float, default=4096, help="MiB at which a case stops")
    p.add_argument(
        "--perf",
        type=Path,
        metavar="DIR",
        help="record each squall case's workers with perf over the window, to DIR/CASE-N.data "
        "(bench/perf_summary.py reads them; profiled cases run slower)",
    )
    p.add_argument("--start-timeout", type=float, default=120.0)
    p.add_argument("--other-timeout", type=float, default=300.0)
    args = p.parse_args(argv)
    if args.perf and not shutil.which("perf"):
        p.error("--perf needs perf (Debian: linux-perf)")
    args.conf = dict(conf_setting(p, item) for item in args.set)
    args.cases = [c for c in args.cases.split(",") if c]
    args.others = [c for c in args.others.split(",") if c]
    if args.rate or args.half:
        args.cases, args.others = ["ack1"], []
    if args.soak:
        args.cases, args.others, args.rounds, args.rss_every = ["noack1"], [], 1, 5.0
    unknown = set(args.cases) - set(CASES) | set(args.others) - set(OTHERS)
    if unknown:
        p.error(f"unknown cases: {', '.join(sorted(unknown))}")
    return args


def main(argv: list[str] | None = None) -> None:
    args = parse_args(argv)
    header = (
        f"{platform.machine()}, {os.cpu_count()} cores, Python {platform.python_version()}, "
        f"{time.strftime('%Y-%m-%d %H:%M UTC', time.gmtime())}"
    )
    from squall.hot_path import describe

    header += f", squall's per-tuple path {describe()}"  # as installed (make venv)
    if args.half:
        full = medians([run_round(["ack1"], args, n) for n in range(args.rounds)])[0]
        if not full["rate"]:
            raise SystemExit(f"no maximum rate to halve: {full.get('error')}")
        args.rate = full["rate"] / 2
        print(f"max {full['rate']:,.0f} tuples/s; now at {args.rate:,.0f}/s", file=sys.stderr)
    rounds = [run_round(args.cases, args, n) for n in range(args.rounds)]
    rows = with_ratios(medians(rounds))
    if args.rate:
        for r in rows:
            r["system"] += f", spout at {args.rate:,.0f}/s"
    if args.json:
        print(json.dumps({"machine": header, "rows": rows, "rounds": rounds}, indent=1))
        return
    print(f"# {header}; medians of {args.rounds} round(s)")
    print(table(rows))
    for r in rows:
        if r.get("cpu_each"):
            each = " + ".join(f"{v:.0f}" for v in r["cpu_each"])
            which = "first round's, " if len(rounds) > 1 else ""  # a list: not a median
            print(f"{r['system']}: CPU % of each worker ({which}highest first) {each}")
        if r.get("busy_us"):
            print(f"{r['system']}: busy() {r['busy_us']:.1f} us a call (CPU time, median)")
        if r.get("error"):
            print(f"{r['system']}: FAILED (in at least one round): {r['error']}")
        if r.get("rss_series_mib"):
            series = ", ".join(f"{v:.0f}" for v in r["rss_series_mib"])
            every, seconds = args.rss_every, r["window_s"]
            print(f"worker RSS MiB every {every:.0f} s for {seconds:.0f} s: {series}")
        if r.get("lag_end_ms") is not None and r.get("lag_start_ms") is not None:
            print(
                f"{r['system']}: median emit-to-count lag {r['lag_start_ms']:,.0f} ms in the "
                f"window's first second, {r['lag_end_ms']:,.0f} ms in its last"
            )
        if args.rate and r.get("p99_ms") is not None:
            verdict = "under" if r["p99_ms"] < 50 else "NOT under"
            print(f"complete latency p99 at {args.rate:,.0f}/s: {verdict} 50 ms")
        if args.rss_bound and r.get("rss_mib") is not None:
            verdict = "stayed under" if r["rss_mib"] < args.rss_bound else "went OVER"
            print(f"{r['system']}: worker RSS {verdict} {args.rss_bound:,.0f} MiB")
    scaling = scaling_lines(rounds)
    if scaling:
        print("scaling over workers, ratios within each round:")
        print("\n".join(scaling))
    if len(rounds) > 1:
        for case in dict.fromkeys(r["case"] for rows in rounds for r in rows):
            each = [r["rate"] for rows in rounds for r in rows if r["case"] == case]
            each = [v for v in each if v is not None]
            if not each:
                continue
            listed = ", ".join(f"{v:,.0f}" for v in each)
            print(f"  {case}: {listed} (median {statistics.median(each):,.0f})")
            ratios = round_ratios(rounds, case)
            if ratios:
                listed = ", ".join(f"{v:.2f}x" for v in ratios)
                median = statistics.median(ratios)
                print(f"  {case} vs {BASE[case]}, round by round: {listed} (median {median:.2f}x)")


if __name__ == "__main__":
    main()
