"""Where a profiled worker's time goes, from a `perf record --call-graph dwarf` of it (as
bench/pertuple.py --perf DIR records each squall case's workers over the window): every
function's inclusive share of the samples, and for some functions what they spend it on.

    python bench/perf_summary.py DIR/ack2-1.data [--top 40] [--callees Transport___drain]
    python bench/perf_summary.py --parts DIR/work1-0.data DIR/work2-0.data

`--parts` puts each sample of the workers in one part of a worker (the bolts' own code, their
squall part, the spout's, tree tracking, sending, receiving, the rest of the shared thread,
other threads) and prints them per 100 samples of the bolts' own code, a column per file:
where the bolts' own code costs the same per tuple in each case (bench/pertuple.py's work
cases), the columns compare what a tuple costs beside it: the speed of the moment, which
moves both, mostly cancels out.

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
from pathlib import Path

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


def read_stacks(data: str) -> list[list[str]]:
    text = subprocess.run(
        ["perf", "script", "-i", data, "-F", "ip,sym"],
        capture_output=True,
        text=True,
        check=True,
    ).stdout
    stacks = parse_stacks(text)
    if not stacks:
        raise SystemExit(f"{data}: no samples with call stacks")
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


# (part, the frame whose samples it takes): the first entry that a sample's stack holds
# anywhere wins (so what a bolt's own code calls stays its own code); the user's own code is
# what runs under the executor's call of it without a compiled squall frame in between (user
# code is interpreted; squall's hot path is compiled: bench/pertuple.py checks both)
USER_UNDER = {
    "BoltExecutor___execute_all": "bolts: own code",
    "SpoutExecutor___burst": "spout: own code",
    "SpoutExecutor___settle": "spout: own code",  # its ack() and fail()
}
PARTS = (
    ("BoltExecutor___execute_all", "bolts: squall's part (emit, ack, flush)"),
    ("SpoutExecutor___settle", "spout: tree tracking (acks in)"),
    ("SpoutExecutor___burst", "spout: squall's part (emit, flush)"),
    ("Transport___pump", "transport: send (encode, ZeroMQ)"),
    ("Transport___drain", "transport: receive (decode, queue)"),
    # a deep stack that perf's 16 KiB copy cut short of its thread's frames
    ("cmsgpack_2unpackb", "transport: receive (decode, queue)"),
    ("cmsgpack_6Packer", "transport: send (encode, ZeroMQ)"),
    ("ExecutorGroup____run", "shared thread: the rest (turns, idle poll)"),
)
OTHER = "other threads (ZeroMQ I/O, heartbeats, ...)"


def part(frames: list[str]) -> str:
    """The part of a worker a sample (frames leaf first) is in."""
    for marker, name in PARTS:
        for depth, frame in enumerate(frames):
            if marker in frame:
                user = USER_UNDER.get(marker)
                compiled = any(f.startswith("CPy") for f in frames[:depth])
                return user if user and not compiled else name
    return OTHER


def parts_table(files: dict[str, list[list[str]]]) -> list[str]:
    """Markdown rows: each part per 100 samples of the bolts' own code, a column per file
    (with the total, and the samples behind each column)."""
    counts = {name: Counter(map(part, stacks)) for name, stacks in files.items()}
    names = list(dict.fromkeys([*USER_UNDER.values(), *(n for _, n in PARTS), OTHER]))
    rows = [f"| part | {' | '.join(files)} |", "|---|" + "---|" * len(files)]
    for row in [*names, "total"]:
        cells = []
        for c in counts.values():
            base = c["bolts: own code"] or 1
            n = sum(c.values()) if row == "total" else c[row]
            cells.append(f"{100 * n / base:.1f}")
        rows.append(f"| {row} | {' | '.join(cells)} |")
    samples = (str(sum(c.values())) for c in counts.values())
    rows.append(f"| (samples) | {' | '.join(samples)} |")
    return rows


def _report(title: str, counts: Iterable[tuple[str, int]], total: int) -> None:
    print(title)
    for name, n in counts:
        print(f"  {100 * n / total:6.2f}%  {name}")


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("data", nargs="+", help="perf.data files recorded with --call-graph dwarf")
    p.add_argument("--top", type=int, default=40, help="functions listed")
    p.add_argument("--callees", nargs="*", default=[], help="functions to break down")
    p.add_argument("--parts", action="store_true", help="the parts table of every file")
    args = p.parse_args()
    stems = [Path(data).stem for data in args.data]
    names = stems if len(set(stems)) == len(stems) else args.data  # alike: their paths
    files = {name: read_stacks(data) for name, data in zip(names, args.data, strict=True)}
    if args.parts:
        print("\n".join(parts_table(files)))
        return
    if len(files) > 1:
        raise SystemExit("one file at a time, except with --parts")
    stacks = next(iter(files.values()))
    total = len(stacks)
    _report(f"{total} samples; inclusive:", inclusive(stacks).most_common(args.top), total)
    for function in args.callees:
        _report(f"inside {function}:", callees(stacks, function).most_common(15), total)


if __name__ == "__main__":
    main()
