"""Storm's tick tuples: with `topology.tick.tuple.freq.secs` set (in the topology conf, or in
a component's own conf, which overrides it), every bolt task is given a tuple from component
`__system` (task -1) on stream `__tick` every that many seconds, on its own turn, unanchored
and never acked or failed: a clock for windowed flushes and periodic commits.

Pure: when a tick is due, time passed in. The executors (bolt_executor.py) deliver them.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from typing import Any

from squall.components import (
    SYSTEM_COMPONENT_ID,
    SYSTEM_TASK_ID,
    SYSTEM_TICK_STREAM_ID,
    TICK_FIELDS,
    Tuple,
)

TICK_KEY = "topology.tick.tuple.freq.secs"


class TickConfError(ValueError):
    """The task's tick frequency is not a whole number of seconds of at least 1."""


def tick_freq(conf: Mapping[str, Any], component: str) -> int | None:
    """The task's tick period in seconds from its conf (the component's over the
    topology's), None when unset. Storm takes an integer (`@IsInteger`); 0 or less would be a
    timer that never waits, so it is refused here as at submit."""
    value = conf.get(TICK_KEY)
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, int) or value < 1:
        raise TickConfError(
            f"component {component!r}: {TICK_KEY} must be a whole number of seconds of at "
            f"least 1, got {value!r}"
        )
    return value


def tick_tuple(freq: int) -> Tuple:
    """The tuple a bolt is given: Storm's, whose one value (field `rate_secs`) is the
    period."""
    return Tuple(SYSTEM_COMPONENT_ID, SYSTEM_TASK_ID, SYSTEM_TICK_STREAM_ID, TICK_FIELDS, (freq,))


class TickSchedule:
    """When a task's next tick is due: every `freq` seconds from the first `poll` (the task's
    first turn, after its initialize). A task that was busy past one or more due times gets
    one tick, not a burst (Storm's timer does not catch up either), and the later ones stay
    on the original beat, so ticks do not drift with the task's load."""

    def __init__(self, freq: int, next_at: float | None = None) -> None:
        self.freq = freq
        self.next_at = next_at  # None until the first poll starts the clock

    def poll(self, now: float) -> bool:
        """Whether a tick is due at `now`; if so, the next one is scheduled."""
        if self.next_at is None:
            self.next_at = now + self.freq
            return False
        if now < self.next_at:
            return False
        missed = math.floor((now - self.next_at) / self.freq)
        self.next_at += (missed + 1) * self.freq
        return True

    def wait(self, now: float) -> float:
        """Seconds until the next tick is due (0: now), for the task's idle wait."""
        if self.next_at is None:
            return float(self.freq)
        return max(0.0, self.next_at - now)
