"""Which connection makes room for a new one: the decision behind nimbus's connection limits.

Refusing newcomers when full lets idle or one-byte-per-second clients lock everyone else out
(256 of them did). Instead a newcomer is admitted and the connection that has waited on its
client the longest is closed: waiting means between requests or part-way through sending a
frame, so both idle and slow clients are the first to go, then clients whose call waits
for a handler thread (it is dropped, never run), and a client whose call is running is never
cut. The per-address cap keeps one host from pushing every other host's connections
out; when a host is at its cap, its own longest-waiting connection makes room.

An authenticated connection (its TLS handshake presented a valid client certificate, or in
open mode it made a valid call) is never closed for a newcomer, who is not authenticated
yet: 300 strangers' idle connections from the admin's own address pushed the admin's
connections out at the per-address cap. When only authenticated connections could make
room, the newcomer is admitted over the cap (at most HANDSHAKE_SLACK of them, pushing each
other out), and only once it has authenticated does it close the authenticated connection
waiting longest (`room_for_authenticated`): a holder of a certificate still cannot lock
others out with idle sessions, and a stranger never pushes one out.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any


@dataclass(frozen=True)
class ConnectionView:
    id: int
    address: str  # the peer's host
    waiting_since: float | None  # monotonic; None while a call of it runs (never evicted)
    queued: bool = False  # its call waits for a handler thread: closed after idle ones
    authenticated: bool = False  # never closed to make room


@dataclass(frozen=True)
class Admission:
    admit: bool
    evict: int | None  # the id of the connection to close first
    reason: str


def slack(max_total: int) -> int:
    """Newcomers admitted past a cap full of authenticated connections, until they
    authenticate (or their handshake deadline passes)."""
    return max(max_total // 8, 4)


def _longest_waiting(
    candidates: Sequence[ConnectionView], authenticated: bool = False
) -> ConnectionView | None:
    waiting = [
        c for c in candidates if c.waiting_since is not None and c.authenticated == authenticated
    ]
    return min(waiting, key=lambda c: (c.queued, c.waiting_since, c.id), default=None)


def _over(
    connections: Sequence[ConnectionView], address: str, max_total: int, max_per_address: int
) -> tuple[Sequence[ConnectionView], str] | None:
    """The pool a connection from `address` must make room in, and why; None: room."""
    same = [c for c in connections if c.address == address]
    if len(same) >= max_per_address:
        return same, f"{address} has {len(same)} connections (per-address cap)"
    if len(connections) >= max_total:
        return connections, f"{len(connections)} connections (nimbus.thrift.max.connections)"
    return None


def room_for_authenticated(
    connections: Sequence[ConnectionView], me: ConnectionView, max_total: int, max_per_address: int
) -> int | None:
    """The authenticated connection a just-authenticated `me` (admitted over a cap) closes:
    the one waiting on its client longest; None when within the caps or none waits."""
    others = [c for c in connections if c.id != me.id]
    over = _over(others, me.address, max_total, max_per_address)
    if over is None:
        return None
    victim = _longest_waiting(over[0], authenticated=True)
    return victim.id if victim is not None else None


def admit(
    connections: Sequence[ConnectionView], address: str, max_total: int, max_per_address: int
) -> Admission:
    """Decide whether a new connection from `address` is served, and whom it replaces."""
    over = _over(connections, address, max_total, max_per_address)
    if over is None:
        return Admission(True, None, "room")
    pool, limit = over
    victim = _longest_waiting(pool)
    if victim is not None:
        return Admission(True, victim.id, f"{limit}; closing the one waiting longest")
    if len(connections) < max_total + slack(max_total):
        return Admission(True, None, f"{limit}, all authenticated or running: over it")
    return Admission(False, None, f"{limit}, all running calls or authenticated")


@dataclass(frozen=True)
class ServerLimits:
    """Every limit the Thrift server applies, read once from the conf."""

    max_frame: int
    max_values: int
    max_connections: int
    max_per_address: int
    idle_secs: float
    request_secs: float
    handshake_secs: float
    threads: int

    @staticmethod
    def from_conf(conf: dict[str, Any]) -> ServerLimits:
        return ServerLimits(
            max_frame=conf["nimbus.thrift.max_buffer_size"],
            max_values=conf["nimbus.thrift.max.request.values"],
            max_connections=conf["nimbus.thrift.max.connections"],
            max_per_address=conf["nimbus.thrift.max.connections.per.address"],
            idle_secs=conf["nimbus.thrift.client.idle.secs"],
            request_secs=conf["nimbus.thrift.request.timeout.secs"],
            handshake_secs=conf["nimbus.thrift.handshake.timeout.secs"],
            threads=conf["nimbus.thrift.threads"],
        )
