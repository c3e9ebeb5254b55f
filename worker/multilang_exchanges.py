"""The rules of each multilang exchange, pure: a bolt tuple (ended by its ack or fail), a
heartbeat (ended by sync), a spout's next/ack/fail (ended by sync). Each `*_step` judges one
event the subprocess sent: Done, the event for the caller to carry out, or a ProtocolError
naming what was out of order."""

from __future__ import annotations

from dataclasses import dataclass

from .multilang_protocol import (
    Ack,
    Emit,
    Event,
    Fail,
    Log,
    Metrics,
    Pid,
    ProtocolError,
    ReportError,
    Sync,
)


@dataclass(frozen=True)
class Done:
    """The exchange is over: `ok` False when the bolt failed its tuple."""

    ok: bool = True


def check_pid(event: Event) -> int:
    """The handshake's only answer is the subprocess's pid."""
    if not isinstance(event, Pid):
        raise ProtocolError(f"expected the handshake's answer {{'pid': ...}}, got {event!r}")
    return event.pid


def bolt_step(tuple_id: str, event: Event) -> Event | Done:
    """One event while a bolt processes tuple `tuple_id`: Done when it acks or fails it,
    else the event for the caller to carry out (an emit, a log, an error report, metrics).

    squall runs a bolt as Storm's BasicBolt: what it emits is anchored to the tuple in hand,
    which is acked or failed before the next one is sent. So an ack or fail of another tuple,
    or an anchor to one, is out of order here."""
    match event:
        case Ack(id) | Fail(id) if id != tuple_id:
            verb = "acks" if isinstance(event, Ack) else "fails"
            raise ProtocolError(
                f"{verb} tuple {id!r} while tuple {tuple_id!r} is in process (squall's shell "
                "bolts ack or fail each tuple before the next is sent)"
            )
        case Ack():
            return Done(True)
        case Fail():
            return Done(False)
        case Emit(anchors=anchors) if any(a != tuple_id for a in anchors):
            other = next(a for a in anchors if a != tuple_id)
            raise ProtocolError(
                f"emit anchored to tuple {other!r} while tuple {tuple_id!r} is in process"
            )
        case Pid():
            raise ProtocolError(f"a pid {event.pid} after the handshake")
        case Sync():
            return event  # a bolt may sync at any time (pystorm does after an error)
    return event


def heartbeat_step(event: Event) -> Event | Done:
    """One event while a heartbeat tuple waits for its sync."""
    match event:
        case Sync():
            return Done(True)
        case Log() | ReportError() | Metrics():
            return event
    raise ProtocolError(f"answered a heartbeat with {event!r}; expected sync")


def spout_step(event: Event) -> Event | Done:
    """One event while a spout handles next, ack or fail: it may emit, log, report, until
    its sync ends the exchange."""
    match event:
        case Sync():
            return Done(True)
        case Emit(anchors=anchors) if anchors:
            raise ProtocolError(f"a spout's emit has anchors {list(anchors)}; spouts have none")
        case Ack() | Fail():
            raise ProtocolError(f"a spout cannot {type(event).__name__.lower()} tuples")
        case Pid():
            raise ProtocolError(f"a pid {event.pid} after the handshake")
    return event
