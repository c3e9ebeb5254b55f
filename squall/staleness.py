"""How a stale answer from nimbus reads: while ZooKeeper cannot be reached nimbus answers
from what it last read and marks its answer with when that began and why (the Thrift fields
stale_since and stale_cause). Pure: the clock reading is passed in, the time of day is the
reader's local time."""

from __future__ import annotations

import time
from typing import Any

ZOOKEEPER_UNREACHABLE = "ZooKeeper unreachable"  # the cause nimbus gives, and clients look for


def stale_mark(answer: Any) -> tuple[float, str] | None:
    """(since, cause) of a Thrift answer nimbus marked stale, else None."""
    since = getattr(answer, "stale_since", None)
    if since is None:
        return None
    return float(since), getattr(answer, "stale_cause", None) or ZOOKEEPER_UNREACHABLE


def stale_note(since: float, cause: str, now: float | None = None) -> str:
    """The line for a stale answer, "ZooKeeper unreachable since 11:52:07 (40 s): figures
    as of then"; without `now` no age (a page that stays on screen a while)."""
    clock = time.strftime("%H:%M:%S", time.localtime(since))
    age = "" if now is None else f" ({max(0, int(now - since))} s)"
    return f"{cause} since {clock}{age}: figures as of then"


def stale_json(answer: Any) -> dict[str, Any]:
    """The UI REST API's fields for it: `stale`, and `staleNote` (null when fresh)."""
    mark = stale_mark(answer)
    return {"stale": mark is not None, "staleNote": None if mark is None else stale_note(*mark)}
