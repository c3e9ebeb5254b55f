"""Jobs run for one topology at a time off the sync loop (downloading its code, its conf),
each on a thread of its own, whose results the loop picks up on its next pass.

A shared pool let a few slow or huge packages hold every thread (four threads: four slow
topologies delayed every other topology's first start). Here no job waits for a thread: a
topology has at most one job of a kind in flight, and only topologies with a worker on this
supervisor's slots get jobs, so a supervisor runs at most (kinds x slots) of them, plus the
jobs of topologies gone meanwhile, which end at their Thrift client's timeout. A failure is
handed back to the loop to report as that topology's error and retry with back-off.
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Iterable
from concurrent.futures import Future
from dataclasses import dataclass
from typing import Any

from .backoff import Retry, after_failure, due


@dataclass(frozen=True)
class Done:
    """A job that ended: its topology, when it was asked for (the loop's monotonic clock),
    and its result, or the error text when it failed."""

    topology_id: str
    began: float
    result: Any = None
    error: str | None = None


class TopologyJobs:
    def __init__(self, kind: str, wake: threading.Event) -> None:
        """`wake` is set when a job ends, so the loop acts on it at once."""
        self.kind, self.wake = kind, wake
        self.jobs: dict[str, tuple[float, Future]] = {}
        self.retries: dict[str, Retry] = {}

    def busy(self, tid: str) -> bool:
        return tid in self.jobs

    def ended(self, tid: str) -> bool:
        """Has the topology's job ended, its result not collected yet?"""
        return tid in self.jobs and self.jobs[tid][1].done()

    def start(self, tid: str, job: Callable[[], Any], now: float) -> bool:
        """Run `job` for the topology unless one is in flight or its retry is not due yet."""
        if tid in self.jobs or not due(self.retries.get(tid), now):
            return False
        future: Future = Future()
        self.jobs[tid] = (now, future)
        thread = threading.Thread(
            target=self._run, args=(job, future), name=f"{self.kind}-{tid}", daemon=True
        )
        thread.start()
        return True

    def _run(self, job: Callable[[], Any], future: Future) -> None:
        try:
            future.set_result(job())
        except BaseException as exc:  # noqa: BLE001 - handed to the loop as the job's error
            future.set_exception(exc)
        finally:
            self.wake.set()

    def collect(self, now: float) -> list[Done]:
        """The jobs that ended: a success clears its topology's retry, a failure delays the
        next attempt (1, 2, 4 ... 60 s)."""
        out = []
        for tid, (began, future) in sorted(self.jobs.items()):
            if not future.done():
                continue
            del self.jobs[tid]
            exc = future.exception()
            if exc is None:
                self.retries.pop(tid, None)
                out.append(Done(tid, began, result=future.result()))
                continue
            self.retries[tid] = after_failure(self.retries.get(tid), now)
            out.append(Done(tid, began, error=f"{type(exc).__name__}: {exc}"))
        return out

    def forget(self, keep: Iterable[str]) -> None:
        """Drop the retry state of topologies no longer assigned here."""
        wanted = set(keep)
        for tid in set(self.retries) - wanted:
            del self.retries[tid]
