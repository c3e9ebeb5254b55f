"""Which UI connection makes room for a new one, so idle or half-sent connections from any
local user cannot lock out whoever holds the UI's token.

uvicorn's own cap (limit_concurrency) counts idle connections and answers 503 to every
request past it: 260 idle sockets from anyone who can reach loopback made the UI 503 for
its real users. Here every connection is admitted and, past a cap, the oldest connection
that has not been vouched for is closed. A connection is vouched for once the app admitted
one of its requests (the token, the client certificate, or open mode: access.py), so an
attacker without the token can only push out their own connections and other unproven
newcomers, never a token holder's, and a newcomer (the newest) is the last to go. One peer
address holds at most `per_peer` unproven connections (its oldest makes room). A
connection that does not send a complete request head within `header_secs` of its opening
or of its last answer is closed, whoever it is (idle ones go after uvicorn's
timeout_keep_alive).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

MAX_CONNECTIONS = 256
MAX_UNPROVEN_PER_PEER = 64
HEADER_SECS = 10.0


@dataclass(frozen=True)
class Limits:
    total: int = MAX_CONNECTIONS
    per_peer: int = MAX_UNPROVEN_PER_PEER
    header_secs: float = HEADER_SECS


@dataclass(frozen=True)
class Seen:
    """One open connection, as the admission decision sees it."""

    id: int
    peer: str
    opened: float  # monotonic
    proven: bool  # the app admitted one of its requests


def to_close(connections: Sequence[Seen], newcomer: Seen, limits: Limits) -> list[int]:
    """The ids to close so that `newcomer` (already in `connections`) fits: the oldest
    unproven ones, its own peer's first when that peer is past its cap; [newcomer.id] when
    every other connection is proven (the newcomer is refused, no token holder is cut)."""
    unproven = sorted((c for c in connections if not c.proven), key=lambda c: (c.opened, c.id))
    closing: list[int] = []
    same = [c for c in unproven if c.peer == newcomer.peer]
    closing += [c.id for c in same[: max(len(same) - limits.per_peer, 0)]]
    over = len(connections) - len(closing) - limits.total
    if over > 0:
        rest = [c.id for c in unproven if c.id not in closing]
        closing += rest[:over]
    return closing
