"""Where a profiled worker's time goes, from a `perf record --call-graph dwarf` of it (as
bench/pertuple.py --perf DIR records each squall case's workers over the window): every
function's inclusive share of the samples, and for some functions what they spend it on.

    python bench/perf_summary.py DIR/ack2-1.data [--top 40] [--callees Transport___drain]

perf samples without interrupting anything (py-spy attached makes GIL waits of its own,
bench/RESULTS.md), and mypyc's compiled functions are C symbols with frames DWARF unwinds
through (`CPyDef_transport___Transport___drain`), so the compiled build profiles by name.
Interpreted Python shows as CPython's evaluator only. Frames of the calling machinery
(vectorcall, the evaluator, thread start) are left out of both lists.
"""

from __future__ import annotations

import argparse
import subprocess
from collections import Counter
from collections.abc import Iterable

GLUE = (
    "inlined",
    "_PyEval_",
    "ectorcall",
    "cfunction_call",
    "_PyObject_MakeTpCall",
    "do_call_core",
    "pythread_wrapper",
    "thread_run",
    "start_thread",
    "clone3",
)


def parse_stacks(text: str) -> list[list[str]]:
    """`perf script -F ip,sym` output as one list per sample, leaf first, of function names
    (offsets and libraries dropped)."""
    stacks: list[list[str]] = []
    frames: list[str] = []
    for line in text.splitlines():
        if not line.strip():
            if frames:
                stacks.append(frames)
            frames = []
            continue
        parts = line.split(None, 1)
        if len(parts) == 2 and line[:1].isspace():
            frames.append(parts[1].rsplit(" (", 1)[0].split("+0x")[0].strip())
    if frames:
        stacks.append(frames)
    return stacks


def _glue(name: str) -> bool:
    return any(g in name for g in GLUE)


def inclusive(stacks: list[list[str]]) -> Counter[str]:
    """Samples with each function anywhere on the stack (once per sample)."""
    counts: Counter[str] = Counter()
    for frames in stacks:
        counts.update({f for f in frames if not _glue(f)})
    return counts


def callees(stacks: list[list[str]], function: str) -> Counter[str]:
    """For the samples inside a function whose name contains `function` (from its outermost
    frame), what it called: the next frame toward the leaf that is neither calling
    machinery nor the function again (mypyc's CPyPy_ wrapper calls its CPyDef_), or
    "(self)"."""
    counts: Counter[str] = Counter()
    for frames in stacks:
        for depth in range(len(frames) - 1, -1, -1):  # outermost first
            if function in frames[depth]:
                below = [f for f in frames[:depth] if not _glue(f) and function not in f]
                counts[below[-1] if below else "(self)"] += 1
                break
    return counts


def _report(title: str, counts: Iterable[tuple[str, int]], total: int) -> None:
    print(title)
    for name, n in counts:
        print(f"  {100 * n / total:6.2f}%  {name}")


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("data", help="a perf.data file recorded with --call-graph dwarf")
    p.add_argument("--top", type=int, default=40, help="functions listed")
    p.add_argument("--callees", nargs="*", default=[], help="functions to break down")
    args = p.parse_args()
    text = subprocess.run(
        ["perf", "script", "-i", args.data, "-F", "ip,sym"],
        capture_output=True,
        text=True,
        check=True,
    ).stdout
    stacks = parse_stacks(text)
    if not stacks:
        raise SystemExit(f"{args.data}: no samples with call stacks")
    total = len(stacks)
    _report(f"{total} samples; inclusive:", inclusive(stacks).most_common(args.top), total)
    for function in args.callees:
        _report(f"inside {function}:", callees(stacks, function).most_common(15), total)


if __name__ == "__main__":
    main()
