"""bench/pertuple.py's squall cases for two installs of squall in one run, interleaved: a
change to the per-tuple path is judged against the code before it on the same machine
minutes apart, not against a figure recorded on another day under another load (issue 38's
"the per-tuple figures do not drop").

    python bench/pertuple_versions.py --before /tmp/old/.venv/bin/python [--rounds 3]
        [--cases ack1,ack2]

Each round runs `pertuple.py --json --rounds 1` (its own LocalCluster) with the `--before`
interpreter, then with `--after` (this interpreter by default), so each runs the squall its
environment imports, workers included (a supervisor starts workers with its own Python).
Each is driven by the bench/pertuple.py of its own checkout where it is an editable install
(the bench's readiness checks read what that squall writes), else by this one. Printed:
each case's rate and tuples per CPU-second for both, round by round, and after over before
with the median.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
from pathlib import Path
from typing import Any

from pertuple_stats import ratio

BENCH = Path(__file__).resolve().parent


def bench_of(python: str) -> Path:
    """The bench/ of the checkout `python`'s squall was installed from (editable), else ours."""
    where = "import pathlib, squall; print(pathlib.Path(squall.__file__).resolve().parents[1])"
    done = subprocess.run(  # not from here: `-c` imports the squall of its working directory
        [python, "-c", where], capture_output=True, text=True, check=True, cwd="/"
    )
    bench = Path(done.stdout.strip()) / "bench"
    return bench if (bench / "pertuple.py").is_file() else BENCH


def run_once(
    python: str, bench: Path, cases: list[str], extra: list[str], timeout: float
) -> dict[str, dict]:
    """One round of `bench`'s pertuple.py under `python`: its rows by case."""
    command = [python, str(bench / "pertuple.py"), "--json", "--rounds", "1", "--others", ""]
    done = subprocess.run(
        [*command, "--cases", ",".join(cases), *extra],
        capture_output=True,
        text=True,
        timeout=timeout,
        cwd=bench.parent,
    )
    if done.returncode:
        last = (done.stderr.strip().splitlines() or ["no output"])[-1]
        raise SystemExit(f"{python} exited {done.returncode}: {last}")
    rows = json.loads(done.stdout)["rows"]
    for row in rows:
        if row.get("error"):
            print(f"{python}: {row['case']}: {row['error']}", file=sys.stderr, flush=True)
    return {row["case"]: row for row in rows}


def compare(before: list[dict], after: list[dict], case: str, key: str) -> list[float]:
    """after over before for `case`'s `key`, round by round (rounds where both have it)."""
    out = []
    for b, a in zip(before, after, strict=True):
        value = ratio(a.get(case, {}).get(key), b.get(case, {}).get(key))
        if value is not None:
            out.append(value)
    return out


def report(before: list[dict], after: list[dict], cases: list[str]) -> list[str]:
    lines = []
    for case in cases:
        for key, what in (("rate", "tuples/s"), ("per_cpu_s", "tuples per CPU-second")):
            olds = [r.get(case, {}).get(key) for r in before]
            news = [r.get(case, {}).get(key) for r in after]
            ratios = compare(before, after, case, key)
            shown = ", ".join(f"{v:.2f}x" for v in ratios) or "-"
            median = f"median {statistics.median(ratios):.2f}x" if ratios else "no pair"
            lines.append(
                f"{case} {what}: before {_listed(olds)}; after {_listed(news)}; "
                f"after/before {shown} ({median})"
            )
    return lines


def _listed(values: list[Any]) -> str:
    return ", ".join("-" if v is None else f"{v:,.0f}" for v in values)


def main(argv: list[str] | None = None) -> None:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawTextHelpFormatter)
    p.add_argument("--before", required=True, help="Python of the install before the change")
    p.add_argument("--after", default=sys.executable, help="Python of the install after it")
    p.add_argument("--rounds", type=int, default=3)
    p.add_argument("--cases", default="ack1,ack2")
    p.add_argument("--timeout", type=float, default=900.0, help="seconds for one round of one")
    args, extra = p.parse_known_args(argv)  # the rest goes to pertuple.py (--set, --measure)
    cases = [c for c in args.cases.split(",") if c]
    args.before, args.after = os.path.abspath(args.before), os.path.abspath(args.after)
    benches = {python: bench_of(python) for python in (args.before, args.after)}
    before: list[dict] = []
    after: list[dict] = []
    for number in range(args.rounds):
        for python, rows in ((args.before, before), (args.after, after)):
            rows.append(run_once(python, benches[python], cases, extra, args.timeout))
        print(f"round {number + 1} of {args.rounds} done", file=sys.stderr, flush=True)
    print(f"# before: {args.before}\n# after: {args.after}")
    print("\n".join(report(before, after, cases)))


if __name__ == "__main__":
    main()
