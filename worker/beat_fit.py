"""A heartbeat that always fits in one ZooKeeper request.

ZooKeeper drops the connection of a client whose request is over jute.maxbuffer (1 MiB by
default); a worker whose beat is that big never beats at all, and its supervisor restarts it
for "not heartbeating" forever, without the cause ever showing. A task's entry grows with its
streams and the windowed stats (about 1 kB), and nimbus allows up to `nimbus.max.tasks` tasks
in one worker, so a beat of a big worker can pass the limit. Liveness matters more than
figures: past the budget the beat first leaves out the windowed figures (the UI's 10m/3h/1d
columns go blank), then everything but each task's scalar figures (counts, ready, idle).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

# The same three quarters of ZooKeeper's default jute.maxbuffer that nimbus keeps to
# (squall/nimbus/core/write_size.py BUDGET): room for the request's framing and ACLs.
BEAT_BUDGET = 1024 * 1024 * 3 // 4

Tasks = Mapping[int, Mapping[str, Any]]


def without_windows(tasks: Tasks) -> dict[int, dict[str, Any]]:
    return {t: {k: v for k, v in entry.items() if k != "windows"} for t, entry in tasks.items()}


def scalars_only(tasks: Tasks) -> dict[int, dict[str, Any]]:
    return {
        t: {k: v for k, v in entry.items() if not isinstance(v, (Mapping, list, tuple))}
        for t, entry in tasks.items()
    }


def fitted(
    tasks: Tasks, encode: Callable[[Tasks], bytes], budget: int = BEAT_BUDGET
) -> tuple[bytes, str | None]:
    """The beat's bytes for `tasks` within `budget`, and what was left out (None: nothing)."""
    data = encode(tasks)
    if len(data) <= budget:
        return data, None
    data = encode(without_windows(tasks))
    if len(data) <= budget:
        return data, "the windowed figures"
    return encode(scalars_only(tasks)), "every figure but the counts"
