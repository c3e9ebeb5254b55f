"""The topology status machine (seed 002; Storm's nimbus state transitions), as a table.

`TRANSITIONS` is the table, as Storm's Nimbus.TOPO_STATE_TRANSITIONS: per status, the
actions it takes and what each does. `transition` is pure: given the topology's /storms
record, an action and the wall-clock time, it looks the pair up and returns instructions
for the controller to carry out. It never does I/O. Setting a status (an instruction that
writes /storms) and transitioning on an action (this function) are kept apart as in Storm.

The actions are Storm's TopologyActions: the user's (ActivateAction, DeactivateAction,
KillAction, RebalanceAction; named apart from nimbus/core/events.py's requests, which carry the
topology's name) and the system's (Monitor, Startup, Remove, DoRebalance). A user action
the status does not take raises IllegalTransition; a system action that arrives late, after
the status moved on, does nothing.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass, replace
from enum import Enum
from typing import Any

from squall.records import PendingEvent, StormBase

MAX_WAIT_SECS = 2**31 - 1  # a wait_secs is a Thrift i32


class TopologyStatus(str, Enum):
    ACTIVE = "active"
    INACTIVE = "inactive"
    KILLED = "killed"
    REBALANCING = "rebalancing"


# --- events ---------------------------------------------------------------------------


@dataclass(frozen=True)
class ActivateAction:
    pass


@dataclass(frozen=True)
class DeactivateAction:
    pass


@dataclass(frozen=True)
class KillAction:
    wait_secs: int


@dataclass(frozen=True)
class RebalanceAction:
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


Event = (
    ActivateAction
    | DeactivateAction
    | KillAction
    | RebalanceAction
    | DoRebalance
    | Monitor
    | Startup
    | Remove
)
Delayed = Remove | DoRebalance  # the events a status schedules for later (kill's, rebalance's)
USER_EVENTS = (ActivateAction, DeactivateAction, KillAction, RebalanceAction)

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
class RemoveNow:
    """The kill's wait is over: remove the topology (nimbus's instructions.RemoveTopology)."""


Instruction = SetBase | Reassign | ScheduleEvent | RemoveNow


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


def _set_status(status: TopologyStatus) -> Transition:
    def set_status(base: StormBase, event: Any, now: float) -> list[Instruction]:
        return [SetBase(replace(base, status=status.value))]

    set_status.__doc__ = f"set `{status.value}`"
    return set_status


def _nothing(base: StormBase, event: Any, now: float) -> list[Instruction]:
    """nothing (already so)"""
    return []


def _kill(base: StormBase, event: KillAction, now: float) -> list[Instruction]:
    """set `killed`, `remove` after the wait (a second kill restarts it)"""
    return _delayed(base, TopologyStatus.KILLED, Remove(), event.wait_secs, now)


def _rebalance(base: StormBase, event: RebalanceAction, now: float) -> list[Instruction]:
    """set `rebalancing` with the new sizes, `do-rebalance` after the wait"""
    counts = dict(base.component_executors)
    counts.update(dict(event.num_executors))
    rebalanced = replace(
        base,
        num_workers=event.num_workers or base.num_workers,
        component_executors=counts,
    )
    return _delayed(rebalanced, TopologyStatus.REBALANCING, DoRebalance(), event.wait_secs, now)


def _monitor(base: StormBase, event: Monitor, now: float) -> list[Instruction]:
    """place what needs it"""
    return [Reassign(scratch=False)]


def _startup(base: StormBase, event: Startup, now: float) -> list[Instruction]:
    """schedule its pending event again"""
    return _resume(base, now)


def _remove(base: StormBase, event: Remove, now: float) -> list[Instruction]:
    """remove the topology"""
    return [RemoveNow()]


def _do_rebalance(base: StormBase, event: DoRebalance, now: float) -> list[Instruction]:
    """place every task from scratch, set the previous status back"""
    restored = replace(
        base,
        status=base.previous_status or TopologyStatus.ACTIVE.value,
        previous_status=None,
        pending=None,
    )
    return [Reassign(scratch=True), SetBase(restored)]


Transition = Callable[[StormBase, Any, float], list[Instruction]]

# Storm's TOPO_STATE_TRANSITIONS: what each status does on each action it takes.
TRANSITIONS: dict[TopologyStatus, dict[type, Transition]] = {
    TopologyStatus.ACTIVE: {
        ActivateAction: _nothing,
        DeactivateAction: _set_status(TopologyStatus.INACTIVE),
        KillAction: _kill,
        RebalanceAction: _rebalance,
        Monitor: _monitor,
        Startup: _startup,
    },
    TopologyStatus.INACTIVE: {
        ActivateAction: _set_status(TopologyStatus.ACTIVE),
        DeactivateAction: _nothing,
        KillAction: _kill,
        RebalanceAction: _rebalance,
        Monitor: _monitor,
        Startup: _startup,
    },
    TopologyStatus.KILLED: {
        KillAction: _kill,
        Startup: _startup,
        Remove: _remove,
    },
    TopologyStatus.REBALANCING: {
        KillAction: _kill,
        Startup: _startup,
        DoRebalance: _do_rebalance,
    },
}


def transition(base: StormBase, event: Event, now: float) -> list[Instruction]:
    """The table's entry for the topology's status and `event`, carried out; a user
    action the status does not take raises IllegalTransition, a system one does nothing."""
    status = TopologyStatus(base.status)
    step = TRANSITIONS[status].get(type(event))
    if step is not None:
        return step(base, event, now)
    if isinstance(event, USER_EVENTS):
        action = type(event).__name__.removesuffix("Action").lower()
        raise IllegalTransition(f"cannot {action} topology {base.name!r}: it is {status.value}")
    return []


ACTION_NAMES = {  # Storm's TopologyActions, as the docs and the CLI name them
    ActivateAction: "activate",
    DeactivateAction: "deactivate",
    KillAction: "kill",
    RebalanceAction: "rebalance",
    Monitor: "monitor",
    Startup: "startup",
    Remove: "remove",
    DoRebalance: "do-rebalance",
}


def table_markdown() -> str:
    """`TRANSITIONS` as the Markdown table docs/architecture.md shows (a test keeps the two
    equal): a row per status, a column per action."""
    lines = [
        "| status | " + " | ".join(ACTION_NAMES.values()) + " |",
        "|---" * (len(ACTION_NAMES) + 1) + "|",
    ]
    for status, row in TRANSITIONS.items():
        cells = []
        for action in ACTION_NAMES:
            step = row.get(action)
            if step is not None:
                cells.append(step.__doc__ or "")
            else:
                cells.append("refused" if action in USER_EVENTS else "ignored")
        lines.append(f"| `{status.value}` | " + " | ".join(cells) + " |")
    return "\n".join(lines) + "\n"
