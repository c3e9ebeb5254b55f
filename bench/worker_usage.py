"""CPU and memory of a cluster's workers, read from /proc: the workers are the processes
below the supervisors (with whatever they start themselves). Used by bench/pertuple.py."""

from __future__ import annotations

import os
import time
from pathlib import Path

from pertuple_stats import ProcStat, descendants, parse_proc_stat

TICKS = os.sysconf("SC_CLK_TCK")
PAGE = os.sysconf("SC_PAGE_SIZE")


def all_processes() -> list[ProcStat]:
    stats = []
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            try:
                stats.append(parse_proc_stat((entry / "stat").read_text()))
            except (OSError, ValueError, IndexError):
                continue  # gone meanwhile
    return stats


class WorkerUsage:
    """CPU between start() and cpu_pct(), and RSS samples, of the supervisors' descendants.
    A worker that exits inside the window takes its CPU time with it: the bench measures
    running topologies only."""

    def __init__(self, supervisor_pids: list[int]) -> None:
        self.roots = supervisor_pids
        self.begin: dict[int, int] = {}
        self.began = 0.0

    def workers(self) -> list[ProcStat]:
        return descendants(all_processes(), self.roots)

    def pids(self) -> list[int]:
        return [w.pid for w in self.workers()]

    def start(self) -> None:
        self.began = time.monotonic()
        self.begin = {w.pid: w.cpu_ticks for w in self.workers()}

    def cpu_pct(self) -> float:
        """Worker CPU since start() in percent of one core."""
        seconds = time.monotonic() - self.began
        ticks = sum(w.cpu_ticks - self.begin.get(w.pid, 0) for w in self.workers())
        return 100 * ticks / TICKS / seconds

    def cpu_pct_each(self) -> list[float]:
        """Each worker's CPU since start() in percent of one core (with what it started),
        highest first: a saturated worker beside an idle one shows here, not in the sum."""
        seconds = time.monotonic() - self.began
        stats = self.workers()
        tops = [w for w in stats if w.ppid in self.roots]
        shares = []
        for top in tops:
            family = [top, *descendants(stats, [top.pid])]
            ticks = sum(w.cpu_ticks - self.begin.get(w.pid, 0) for w in family)
            shares.append(100 * ticks / TICKS / seconds)
        return sorted(shares, reverse=True)

    def rss_mib(self) -> float:
        return sum(w.rss_pages for w in self.workers()) * PAGE / 2**20

    def sample_rss(self, seconds: float, every: float, stop_above: float) -> list[float]:
        """RSS of all workers together every `every` seconds for `seconds` seconds, or until
        a sample passes `stop_above` MiB (the machine is shared: an unbounded topology must
        not take it down)."""
        samples = [self.rss_mib()]
        deadline = time.monotonic() + seconds
        while (left := deadline - time.monotonic()) > 0 and samples[-1] <= stop_above:
            time.sleep(min(every, left))
            samples.append(self.rss_mib())
        return samples
