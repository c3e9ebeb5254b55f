"""Periodic and delayed jobs (APScheduler). A timer job only enqueues work for the
controller; it never touches nimbus state itself."""

from __future__ import annotations

from collections.abc import Callable
from datetime import datetime, timedelta, timezone

from apscheduler.schedulers.background import BackgroundScheduler


class Timers:
    def __init__(self) -> None:
        self.scheduler = BackgroundScheduler(timezone=timezone.utc)
        self.scheduler.start()

    def every(self, secs: float, fn: Callable[[], None]) -> None:
        self.scheduler.add_job(fn, "interval", seconds=secs, max_instances=1, coalesce=True)

    def after(self, secs: float, fn: Callable[[], None]) -> None:
        when = datetime.now(timezone.utc) + timedelta(seconds=max(0.0, secs))
        self.scheduler.add_job(fn, "date", run_date=when, misfire_grace_time=None)

    def stop(self) -> None:
        self.scheduler.shutdown(wait=False)
