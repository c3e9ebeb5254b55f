"""The jobs nimbus's controller thread takes from its queue, one at a time
(nimbus/controller.py). Plain data, so that a Thrift thread, a watch or a timer can post one
without touching the controller's state."""

from __future__ import annotations

from dataclasses import dataclass

from squall.nimbus.core import events as ev


@dataclass(frozen=True)
class Decide:
    """Run `handle` on this event and carry out its instructions."""

    event: ev.Event


@dataclass(frozen=True)
class TakeLead:
    """Take the epoch, load what the new leader needs, and decide BecameLeader."""


@dataclass(frozen=True)
class Stop:
    pass


@dataclass(frozen=True)
class Barrier:
    """Nothing: done once every job posted before it is done (a lead being taken)."""


Job = Decide | TakeLead | Stop | Barrier
