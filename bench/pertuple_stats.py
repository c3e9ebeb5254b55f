"""The arithmetic of bench/pertuple.py, pure over plain data so that it can be tested apart:
percentiles, rates of running totals between two instants, /proc/<pid>/stat lines, the
median row of several rounds and the printed table."""

from __future__ import annotations

import math
import statistics
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import Any


def percentile(values: Sequence[float], q: float) -> float | None:
    """The q-th percentile (0-100) by linear interpolation between closest ranks, as numpy's
    default; None for no values."""
    if not values:
        return None
    ordered = sorted(values)
    rank = (len(ordered) - 1) * q / 100
    low, high = math.floor(rank), math.ceil(rank)
    return ordered[low] + (ordered[high] - ordered[low]) * (rank - low)


def value_at(records: Sequence[dict[str, Any]], key: str, t: float) -> float | None:
    """A running total `key` at wall-clock time `t`, linearly interpolated between the two
    records around `t` (records in time order, each with "t"); None outside their span."""
    for before, after in zip(records, records[1:], strict=False):
        if before["t"] <= t <= after["t"]:
            span = after["t"] - before["t"]
            share = (t - before["t"]) / span if span > 0 else 1.0
            return before[key] + (after[key] - before[key]) * share
    return None


def rate_between(records: Sequence[dict[str, Any]], key: str, t0: float, t1: float) -> float:
    """How fast the running total `key` grew per second between t0 and t1."""
    if t1 <= t0:
        raise ValueError("the window must have a positive length")
    v0, v1 = value_at(records, key, t0), value_at(records, key, t1)
    if v0 is None or v1 is None:
        raise ValueError(f"the records of {key!r} do not span the window")
    return (v1 - v0) / (t1 - t0)


def samples_between(
    records: Iterable[dict[str, Any]], key: str, t0: float, t1: float
) -> list[float]:
    """The samples (lists under `key`) of the records written in (t0, t1]."""
    return [s for r in records if t0 < r["t"] <= t1 for s in r.get(key, ())]


@dataclass(frozen=True)
class ProcStat:
    """The fields of /proc/<pid>/stat the bench reads."""

    pid: int
    ppid: int
    cpu_ticks: int  # utime + stime, in clock ticks
    rss_pages: int


def parse_proc_stat(text: str) -> ProcStat:
    """A /proc/<pid>/stat line; the command name in parentheses may hold spaces and
    parentheses, so the fields are counted from its last ')'."""
    head, _, tail = text.rpartition(")")
    pid = int(head.split("(", 1)[0])
    fields = tail.split()  # fields[0] is field 3 of proc(5), the state
    return ProcStat(
        pid=pid,
        ppid=int(fields[1]),
        cpu_ticks=int(fields[11]) + int(fields[12]),
        rss_pages=int(fields[21]),
    )


def descendants(stats: Iterable[ProcStat], roots: Iterable[int]) -> list[ProcStat]:
    """The processes below `roots` (children, their children...), not the roots."""
    children: dict[int, list[ProcStat]] = {}
    for s in stats:
        children.setdefault(s.ppid, []).append(s)
    found, todo = [], list(roots)
    while todo:
        for child in children.get(todo.pop(), []):
            found.append(child)
            todo.append(child.pid)
    return found


def median_row(rounds: Sequence[dict[str, Any]]) -> dict[str, Any]:
    """Each numeric field's median over the rounds that have it; other fields from the
    first round that has them (a round that failed has fewer fields)."""
    row: dict[str, Any] = {}
    for key in dict.fromkeys(k for r in rounds for k in r):
        values = [r[key] for r in rounds if isinstance(r.get(key), int | float)]
        first = next(r[key] for r in rounds if key in r)
        row[key] = statistics.median(values) if values else first
    return row


def ratio(a: float | None, b: float | None) -> float | None:
    return a / b if a is not None and b else None


def _num(v: float | None, digits: int = 0) -> str:
    return "-" if v is None else f"{v:,.{digits}f}"


def per_cpu_second(rate: float | None, cpu_pct: float | None) -> float | None:
    """Tuples per second of CPU the system got: on a machine shared with other work, a
    process that got a third of a core shows it in its rate, not here."""
    return rate / (cpu_pct / 100) if rate is not None and cpu_pct else None


def _times(v: float | None) -> str:
    return "-" if v is None else f"{v:.2f}x"


def table(rows: Sequence[dict[str, Any]]) -> str:
    """The Markdown table of the issue, with CPU and memory columns."""
    lines = [
        "| system | tuples/s | vs Bytewax | tuples/CPU-s | vs Bytewax per CPU-s "
        "| latency p50 / p99 ms | emitted/s | CPU % | RSS MiB |",
        "|---|---|---|---|---|---|---|---|---|",
    ]
    for r in rows:
        latency = (
            "-"
            if r.get("p50_ms") is None
            else f"{_num(r['p50_ms'], 1)} / {_num(r.get('p99_ms'), 1)}"
            + (" (emit-to-count)" if r.get("latency_kind") == "lag" else "")
        )
        lines.append(
            f"| {r['system']} | {_num(r.get('rate'))} | {_times(r.get('vs_bytewax'))} | "
            f"{_num(r.get('per_cpu_s'))} | {_times(r.get('vs_bytewax_cpu'))} | {latency} | "
            f"{_num(r.get('emitted_rate'))} | {_num(r.get('cpu_pct'))} | "
            f"{_num(r.get('rss_mib'))} |"
        )
    return "\n".join(lines)
