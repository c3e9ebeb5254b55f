"""Who may read a partition: the decisions of the partition ownership recipe.

A task reads a partition only while it holds the partition's ephemeral owner node and its
ZooKeeper session is known to be alive. The danger is the session: once the connection is
lost (SUSPENDED) the session may expire at the server at any moment, its ephemeral node then
vanishes and another task takes the partition. So the owner stops reading at SUSPENDED, before
the session can expire, resumes only if the connection comes back within the same session, and
after LOST (the session expired) must claim the partition anew and re-read its committed
offset, because a successor may have read and committed meanwhile.

`step(state, event)` is the whole decision: a pure function of plain data, tested cell by
cell; `PartitionOwner` (recipes/owner.py) feeds it kazoo's callbacks and executes what it
returns. An unknown event raises.
"""

from __future__ import annotations

import enum
from dataclasses import dataclass


class Ownership(enum.Enum):
    WAITING = "waiting"  # not ours (yet): claim, or watch the current owner's node
    OWNED = "owned"  # our node exists and our session is alive: read
    SUSPENDED = "suspended"  # our node, but the session may be expiring: do not read
    LOST = "lost"  # the session expired with our node: claim again once reconnected
    RELEASED = "released"  # given up for good (the task stops)


# --- events: what happened ---


@dataclass(frozen=True)
class ClaimWon:
    """Our create of the owner node succeeded (or found the node ours already)."""


@dataclass(frozen=True)
class ClaimRefused:
    """Another owner's node exists."""


@dataclass(frozen=True)
class OwnerGone:
    """The owner node was deleted: someone else's (our turn) or ours (taken from us)."""


@dataclass(frozen=True)
class Suspended:
    """The connection dropped; the session may or may not survive."""


@dataclass(frozen=True)
class Reconnected:
    """Connected again: within the same session after Suspended, a new one after SessionLost."""


@dataclass(frozen=True)
class SessionLost:
    """The session expired: every ephemeral node of ours is gone."""


@dataclass(frozen=True)
class Fenced:
    """A conditional write of our offset failed: someone else wrote it since we read it."""


@dataclass(frozen=True)
class Release:
    """The task stops and gives the partition back."""


Event = (
    ClaimWon | ClaimRefused | OwnerGone | Suspended | Reconnected | SessionLost | Fenced | Release
)


# --- instructions: what to do ---


@dataclass(frozen=True)
class TryClaim:
    """Create the ephemeral owner node."""


@dataclass(frozen=True)
class WatchOwner:
    """Set a watch on the owner node (someone else's while waiting, ours while owning)."""


@dataclass(frozen=True)
class DeleteOwner:
    """Delete our owner node."""


@dataclass(frozen=True)
class StartReading:
    """Load the committed position and read from it."""


@dataclass(frozen=True)
class ResumeReading:
    """Read on from where reading stopped: the session survived, nobody else read."""


@dataclass(frozen=True)
class StopReading:
    """Read nothing more (replays included) until told to start or resume."""


@dataclass(frozen=True)
class DropPosition:
    """Forget what was read and not committed: a successor may have read past it."""


Instruction = (
    TryClaim | WatchOwner | DeleteOwner | StartReading | ResumeReading | StopReading | DropPosition
)
Step = tuple[Ownership, tuple[Instruction, ...]]

START: Step = (Ownership.WAITING, (TryClaim(),))
_TAKEN_FROM_US: tuple[Instruction, ...] = (StopReading(), DropPosition(), TryClaim())


def may_read(state: Ownership) -> bool:
    return state is Ownership.OWNED


def step(state: Ownership, event: Event) -> Step:
    """The next state and what to do, for `event` arriving in `state`."""
    match state:
        case Ownership.WAITING:
            return _waiting(event)
        case Ownership.OWNED:
            return _owned(event)
        case Ownership.SUSPENDED:
            return _suspended(event)
        case Ownership.LOST:
            return _lost(event)
        case Ownership.RELEASED:
            _check(event)
            return Ownership.RELEASED, ()
    raise ValueError(f"unknown ownership state {state!r}")  # pragma: no cover


def _waiting(event: Event) -> Step:
    match event:
        case ClaimWon():
            return Ownership.OWNED, (WatchOwner(), StartReading())
        case ClaimRefused():
            return Ownership.WAITING, (WatchOwner(),)
        case OwnerGone() | Reconnected():
            return Ownership.WAITING, (TryClaim(),)
        case Suspended() | SessionLost() | Fenced():
            return Ownership.WAITING, ()
        case Release():
            return Ownership.RELEASED, ()
    return _unknown(event)


def _owned(event: Event) -> Step:
    match event:
        case ClaimWon() | ClaimRefused() | Reconnected():
            return Ownership.OWNED, ()  # a late answer to a claim: we hold the node
        case Suspended():
            return Ownership.SUSPENDED, (StopReading(),)
        case SessionLost():
            return Ownership.LOST, (StopReading(), DropPosition())
        case OwnerGone() | Fenced():
            return Ownership.WAITING, _TAKEN_FROM_US
        case Release():
            return Ownership.RELEASED, (StopReading(), DeleteOwner())
    return _unknown(event)


def _suspended(event: Event) -> Step:
    match event:
        case Reconnected():
            return Ownership.OWNED, (WatchOwner(), ResumeReading())
        case SessionLost():
            return Ownership.LOST, (DropPosition(),)
        case OwnerGone() | Fenced():
            return Ownership.WAITING, _TAKEN_FROM_US[1:]
        case ClaimWon() | ClaimRefused() | Suspended():
            return Ownership.SUSPENDED, ()
        case Release():
            return Ownership.RELEASED, (DeleteOwner(),)
    return _unknown(event)


def _lost(event: Event) -> Step:
    match event:
        case Reconnected():
            return Ownership.WAITING, (TryClaim(),)
        case ClaimWon() | ClaimRefused() | OwnerGone() | Suspended() | SessionLost() | Fenced():
            return Ownership.LOST, ()
        case Release():
            return Ownership.RELEASED, ()
    return _unknown(event)


def _check(event: Event) -> None:
    if not isinstance(event, Event):
        _unknown(event)


def _unknown(event: object) -> Step:
    raise TypeError(f"unknown ownership event {event!r}")
