"""When to try again after a failure: a worker that keeps dying, a code package that keeps
failing to download or unpack. Pure: the caller passes its monotonic clock in.

Retrying at once turned one crashing worker into a fork loop and one bad package into a
supervisor that did nothing else; never retrying left a topology down after one hiccup. The
rule is Storm's and Kubernetes' crash-loop back-off: 1, 2, 4 ... 60 s, and a worker that
stayed up for a while before it died starts again at 1 s.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass

FIRST_DELAY_SECS = 1.0
MAX_DELAY_SECS = 60.0
# A worker that ran this long before dying counts as healthy: its next failure is a first one.
RESET_AFTER_SECS = 60.0


@dataclass(frozen=True)
class Retry:
    """`failures` in a row; the next attempt is due at `not_before` (monotonic seconds)."""

    failures: int
    not_before: float


def retry_delay(failures: int) -> float:
    """1 s after the first failure, doubling, at most MAX_DELAY_SECS; 0 before any."""
    if failures <= 0:
        return 0.0
    return min(MAX_DELAY_SECS, FIRST_DELAY_SECS * 2 ** min(failures - 1, 32))


def after_failure(previous: Retry | None, now: float, ran_for: float = 0.0) -> Retry:
    """The retry state after one more failure at `now`; `ran_for` is how long the failed
    attempt lived (a worker's uptime), so a long healthy run resets the count."""
    failures = 1
    if previous is not None and ran_for < RESET_AFTER_SECS:
        failures = previous.failures + 1
    return Retry(failures, now + retry_delay(failures))


def due(retry: Retry | None, now: float) -> bool:
    """May the next attempt start now?"""
    return retry is None or now >= retry.not_before


def next_wake(retries: Iterable[Retry], now: float, period: float) -> float:
    """How long the sync loop sleeps: its period, or less when a back-off ends sooner (a
    worker due again in 1 s is not left waiting for the period)."""
    waits = [r.not_before - now for r in retries if r.not_before > now]
    return max(0.05, min([float(period), *waits]))
