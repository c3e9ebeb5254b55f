"""How many error reports of one task reach ZooKeeper (Storm's
topology.max.error.report.per.interval per topology.error.throttle.interval.secs).

A spout or bolt that raises on every tuple would otherwise rewrite its /errors node tens of
times a second. Within an interval the first `limit` reports go through and the rest are only
counted; the next report that goes through says how many were held back, so no failure is
silently lost. Pure: the caller keeps one `ThrottleState` per task and passes the time.
"""

from __future__ import annotations

from dataclasses import dataclass, replace

MAX_LINE = 500  # characters of a held-back error's first line kept for its report


@dataclass(frozen=True)
class ThrottleState:
    window_start: float | None = None
    reported: int = 0
    suppressed: int = 0
    suppressed_since: float | None = None
    # the first line of the newest held-back error: a burst that stopped is reported by it,
    # so the topology's last error names the exception, not only a count
    last_suppressed: str = ""


@dataclass(frozen=True)
class Verdict:
    """Whether this report is written, and the note it carries about the held-back ones."""

    report: bool
    note: str = ""


def admit(
    state: ThrottleState,
    now: float,
    limit: int,
    interval: float,
    urgent: bool = False,
    text: str = "",
) -> tuple[ThrottleState, Verdict]:
    """The state after one more error at `now` (whose report is `text`), and whether it is
    reported. An `urgent` one (the reason a worker is about to exit) is always reported."""
    if state.window_start is None or now - state.window_start >= interval:
        state = replace(state, window_start=now, reported=0)
    if state.reported >= limit and not urgent:
        since = state.suppressed_since if state.suppressed_since is not None else now
        held = replace(
            state,
            suppressed=state.suppressed + 1,
            suppressed_since=since,
            last_suppressed=text.partition("\n")[0][:MAX_LINE],
        )
        return held, Verdict(False)
    note = ""
    if state.suppressed:
        since = state.suppressed_since if state.suppressed_since is not None else now
        note = f" (and {state.suppressed} more errors in the last {max(now - since, 0):.0f} s)"
    after = replace(
        state, reported=state.reported + 1, suppressed=0, suppressed_since=None, last_suppressed=""
    )
    return after, Verdict(True, note)


def overdue(state: ThrottleState, now: float, interval: float) -> tuple[ThrottleState, str]:
    """A report of its own for errors held back an interval ago when no error came since to
    carry their count (a burst that stopped): its text, or "" when there is none to write."""
    if not state.suppressed or state.window_start is None or now - state.window_start < interval:
        return state, ""
    since = state.suppressed_since if state.suppressed_since is not None else now
    count = (
        f"{state.suppressed} more errors in the last {max(now - since, 0):.0f} s were not "
        "reported (topology.max.error.report.per.interval)"
    )
    text = (
        f"{state.last_suppressed} ({count}; this is the last)" if state.last_suppressed else count
    )
    after = replace(
        state,
        window_start=now,
        reported=1,
        suppressed=0,
        suppressed_since=None,
        last_suppressed="",
    )
    return after, text


def with_note(text: str, note: str) -> str:
    """`note` at the end of the report's first line, where a capped report still shows it."""
    first, sep, rest = text.partition("\n")
    return f"{first}{note}{sep}{rest}"
