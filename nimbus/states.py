"""The topology status machine (seed 002; Storm's nimbus state transitions), as a table.

`transition` is pure: given the topology's /storms record, an event and the wall-clock time,
it returns instructions for the controller to carry out. It never does I/O. Setting a status
(an instruction that writes /storms) and transitioning on an event (this function) are kept
apart as in Storm.

User events (activate, deactivate, kill, rebalance) that make no sense in the current status
raise IllegalTransition; system events (monitor, startup, remove, do-rebalance) that arrive
late, after the status moved on, do nothing.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, replace
from enum import Enum

from squall.records import PendingEvent, StormBase

MAX_WAIT_SECS = 2**31 - 1  # a wait_secs is a Thrift i32


class TopologyStatus(str, Enum):
    ACTIVE = "active"
    INACTIVE = "inactive"
    KILLED = "killed"
    REBALANCING = "rebalancing"


# --- events ---------------------------------------------------------------------------


@dataclass(frozen=True)
class Activate:
    pass


@dataclass(frozen=True)
class Deactivate:
    pass


@dataclass(frozen=True)
class Kill:
    wait_secs: int


@dataclass(frozen=True)
class Rebalance:
    wait_secs: int
    num_workers: int | None = None
    num_executors: tuple[tuple[str, int], ...] = ()


@dataclass(frozen=True)
class DoRebalance:
    pass


@dataclass(frozen=True)
class Monitor:
    pass


@dataclass(frozen=True)
class Startup:
    pass


@dataclass(frozen=True)
class Remove:
    pass


Event = Activate | Deactivate | Kill | Rebalance | DoRebalance | Monitor | Startup | Remove
Delayed = Remove | DoRebalance  # the events a status schedules for later (kill's, rebalance's)
USER_EVENTS = (Activate, Deactivate, Kill, Rebalance)

# --- instructions ------------------------------------------------------------------------


@dataclass(frozen=True)
class SetBase:
    """Write this record to /storms/[id]."""

    base: StormBase


@dataclass(frozen=True)
class Reassign:
    scratch: bool


@dataclass(frozen=True)
class ScheduleEvent:
    event: Delayed
    delay_secs: float


@dataclass(frozen=True)
class RemoveTopology:
    pass


Instruction = SetBase | Reassign | ScheduleEvent | RemoveTopology


class IllegalTransition(Exception):
    """A user asked for something the topology's status does not allow."""


EVENT_NAMES: dict[str, type[Delayed]] = {"remove": Remove, "do-rebalance": DoRebalance}


def _event_name(event: Delayed) -> str:
    return {Remove: "remove", DoRebalance: "do-rebalance"}[type(event)]


def _delayed(base: StormBase, status: TopologyStatus, event: Delayed, wait: int, now: float):
    """Set `status` and schedule `event`; the due time is kept in /storms for restarts."""
    wait = max(0, wait)
    previous = base.previous_status
    if TopologyStatus(base.status) in (TopologyStatus.ACTIVE, TopologyStatus.INACTIVE):
        previous = base.status
    new = replace(
        base,
        status=status.value,
        previous_status=previous,
        pending=PendingEvent(_event_name(event), now + wait),
    )
    return [SetBase(new), ScheduleEvent(event, wait)]


def _resume(base: StormBase, now: float) -> list[Instruction]:
    """The pending event again, when it is due. A due time no nimbus would write (not a
    finite number, or past any wait Thrift can ask for) fires at once: scheduling it raised
    OverflowError and every nimbus failed to take the lead."""
    if base.pending is None:
        return []
    event = EVENT_NAMES[base.pending.event]()
    delay = base.pending.due_secs - now
    if not math.isfinite(delay) or delay > MAX_WAIT_SECS:
        delay = 0.0
    return [ScheduleEvent(event, max(0.0, delay))]


def transition(base: StormBase, event: Event, now: float) -> list[Instruction]:
    status = TopologyStatus(base.status)
    alive = status in (TopologyStatus.ACTIVE, TopologyStatus.INACTIVE)

    if isinstance(event, Activate) and alive:
        if status is TopologyStatus.ACTIVE:
            return []
        return [SetBase(replace(base, status=TopologyStatus.ACTIVE.value))]
    if isinstance(event, Deactivate) and alive:
        if status is TopologyStatus.INACTIVE:
            return []
        return [SetBase(replace(base, status=TopologyStatus.INACTIVE.value))]
    if isinstance(event, Kill):  # legal in every status; a second kill resets the wait
        return _delayed(base, TopologyStatus.KILLED, Remove(), event.wait_secs, now)
    if isinstance(event, Rebalance) and alive:
        counts = dict(base.component_executors)
        counts.update(dict(event.num_executors))
        rebalanced = replace(
            base,
            num_workers=event.num_workers or base.num_workers,
            component_executors=counts,
        )
        return _delayed(rebalanced, TopologyStatus.REBALANCING, DoRebalance(), event.wait_secs, now)
    if isinstance(event, USER_EVENTS):
        raise IllegalTransition(
            f"cannot {type(event).__name__.lower()} topology {base.name!r}: it is {status.value}"
        )

    if isinstance(event, Monitor):
        return [Reassign(scratch=False)] if alive else []
    if isinstance(event, Startup):
        return _resume(base, now)
    if isinstance(event, Remove) and status is TopologyStatus.KILLED:
        return [RemoveTopology()]
    if isinstance(event, DoRebalance) and status is TopologyStatus.REBALANCING:
        restored = replace(
            base,
            status=base.previous_status or TopologyStatus.ACTIVE.value,
            previous_status=None,
            pending=None,
        )
        return [Reassign(scratch=True), SetBase(restored)]
    return []
