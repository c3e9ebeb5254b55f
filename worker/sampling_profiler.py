"""What a Python worker does for Storm's JVM profiling actions, as plain functions plus one
sampler thread.

Storm's JPROFILE_* actions drive a JVM profiler. cProfile sees only the thread that enables
it (before Python 3.12), and a worker's time is spent in its executor threads, so the
profiler here samples every thread's stack (sys._current_frames) every INTERVAL_SECS and
counts the stacks; a dump writes them in the "collapsed" form flame-graph tools read. The
distinct stacks kept are capped, so a long profile cannot grow memory without bound.
JSTACK_DUMP is every thread's stack now; JMAP_DUMP a summary of the heap by object type
(the gc module's view: what a Python process has instead of a JVM heap dump).
"""

from __future__ import annotations

import collections
import gc
import sys
import threading
import traceback
from collections.abc import Mapping
from types import FrameType

INTERVAL_SECS = 0.01
MAX_STACKS = 10_000
MAX_DEPTH = 64


def stack_of(frame: FrameType | None) -> tuple[str, ...]:
    """A frame's stack, outermost first, as "function (file:line)" entries."""
    entries: list[str] = []
    while frame is not None and len(entries) < MAX_DEPTH:
        code = frame.f_code
        entries.append(f"{code.co_name} ({code.co_filename}:{frame.f_lineno})")
        frame = frame.f_back
    return tuple(reversed(entries))


def collapsed(counts: Mapping[tuple[str, ...], int]) -> str:
    """Brendan Gregg's collapsed stacks: "outer;inner count" per line, most seen first."""
    lines = sorted(counts.items(), key=lambda item: (-item[1], item[0]))
    return "".join(f"{';'.join(stack)} {n}\n" for stack, n in lines)


def thread_dump() -> str:
    """Every thread's stack now (JSTACK_DUMP)."""
    names = {t.ident: t.name for t in threading.enumerate()}
    out = []
    for ident, frame in sorted(sys._current_frames().items()):
        out.append(f'"{names.get(ident, "?")}" ident={ident}\n')
        out.extend(traceback.format_stack(frame))
        out.append("\n")
    return "".join(out)


def heap_summary(top: int = 50) -> str:
    """Live objects the collector tracks, by type, most numerous first (JMAP_DUMP)."""
    counts = collections.Counter(type(o).__qualname__ for o in gc.get_objects())
    lines = [f"{n:>10} {name}\n" for name, n in counts.most_common(top)]
    stats = "".join(f"generation {i}: {s}\n" for i, s in enumerate(gc.get_stats()))
    return f"{sum(counts.values())} objects tracked by gc\n{stats}" + "".join(lines)


class SamplingProfiler:
    """Samples every thread but its own until stopped (JPROFILE_START / JPROFILE_STOP)."""

    def __init__(self) -> None:
        self.counts: collections.Counter[tuple[str, ...]] = collections.Counter()
        self.lock = threading.Lock()
        self.stopping = threading.Event()
        self.thread: threading.Thread | None = None

    @property
    def running(self) -> bool:
        return self.thread is not None and self.thread.is_alive()

    def start(self) -> None:
        if self.running:
            return
        self.stopping.clear()
        self.thread = threading.Thread(target=self._sample, name="profiler", daemon=True)
        self.thread.start()

    def _sample(self) -> None:
        me = threading.get_ident()
        while not self.stopping.wait(INTERVAL_SECS):
            for ident, frame in sys._current_frames().items():
                if ident == me:
                    continue
                stack = stack_of(frame)
                with self.lock:
                    if stack in self.counts or len(self.counts) < MAX_STACKS:
                        self.counts[stack] += 1

    def dump(self) -> str:
        with self.lock:
            return collapsed(self.counts)

    def stop(self) -> str:
        """Stop sampling; what it saw (then forgotten)."""
        self.stopping.set()
        if self.thread is not None:
            self.thread.join(5)
        with self.lock:
            out = collapsed(self.counts)
            self.counts.clear()
        return out
