"""The one liveness rule for anything that heartbeats: nimbus's tasks, the supervisor's
workers, and the stats nimbus reports for a task.

Every judge uses its own clock only: a beat is timed when the judge saw it change, never by
the beating process's clock. A thing gets `launch_grace` after it (re)started to send its
first beat; after that it is alive while its last beat, or its start if it has not beaten
since, is at most `timeout` old. A beat from before the start (an earlier incarnation, the
slot a task left) does not count.
"""

from __future__ import annotations

# Beats carry whole seconds, so two durations compared across processes may differ by this.
ROUNDING_SLACK_SECS = 2


def beat_is_current(beat_since: float, started_at: float, slack: float = 0.0) -> bool:
    """Does a beat first seen (or from a process started) at `beat_since` speak for a thing
    started at `started_at`?"""
    return beat_since >= started_at - slack


def is_alive(
    started_at: float, last_beat: float | None, now: float, timeout: float, launch_grace: float
) -> bool:
    if now - started_at <= launch_grace:
        return True
    if last_beat is not None and beat_is_current(last_beat, started_at):
        return now - last_beat <= timeout
    return now - started_at <= timeout
