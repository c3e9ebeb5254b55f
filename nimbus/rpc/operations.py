"""The wrapper every Thrift method of nimbus goes through: authorize the caller as Storm's
operation, then run the method so that an internal error fails one call, never the
connection or the server (declared Thrift exceptions pass through to the client).

Its own module so that the handler and the call groups it delegates to (blob_calls,
ui_reads, ...) share one authorization path.
"""

from __future__ import annotations

import functools
import inspect
import logging
from collections.abc import Callable
from typing import Any

from thriftpy2.thrift import TApplicationException, TException

log = logging.getLogger("squall.nimbus.rpc.handler")


def guarded(method: Callable[..., Any]) -> Callable[..., Any]:
    @functools.wraps(method)
    def wrapper(*args: Any, **kwargs: Any) -> Any:
        try:
            return method(*args, **kwargs)
        except TException:
            raise
        except Exception as exc:
            missing = _missing(method, args, kwargs)
            if missing:  # the client's error, not nimbus's: one line, a typed answer
                message = f"{method.__name__}: missing argument(s) {', '.join(missing)}"
                log.info("%s (%s: %s)", message, type(exc).__name__, exc)
                raise TApplicationException(TApplicationException.PROTOCOL_ERROR, message) from None
            log.exception("%s failed", method.__name__)
            raise TApplicationException(
                TApplicationException.INTERNAL_ERROR, f"{method.__name__}: {exc}"
            ) from exc

    return wrapper


def _missing(method: Callable[..., Any], args: tuple, kwargs: dict) -> list[str]:
    """The arguments a call left out: Storm's IDL marks none required, so a Thrift client
    may omit any and the method receives None (some accept it: a kill's options)."""
    try:
        bound = inspect.signature(method).bind_partial(*args, **kwargs)
    except (TypeError, ValueError):
        return []
    return [name for name, value in bound.arguments.items() if value is None]


def op(
    operation: str, topology: bool | Callable[[Any], Any] = False, acts: bool = False
) -> Callable[..., Any]:
    """Authorize the call as Storm's `operation` (on the topology named by the first
    argument when `topology`, or by what `topology` finds in it when a function) through the
    object's `_authorize` (a CallAuthorizer's authorize), then run it guarded. A call that
    `acts` on the topology (kill, rebalance, a conf...) gets the id of the topology judged
    in place of the name it was given: by the name, the controller would act on whichever
    topology has it when the job runs, a new one resubmitted meanwhile by someone else.
    Reads keep what they were given (getTopologyInfoByName looks up names)."""

    def target(args: tuple[Any, ...]) -> Any:
        if not topology or not args:
            return None
        return topology(args[0]) if callable(topology) else args[0]

    def decorate(method: Callable[..., Any]) -> Callable[..., Any]:
        @functools.wraps(method)
        def authorized(self: Any, *args: Any) -> Any:
            tid = self._authorize(operation, target(args))
            if acts and topology is True and tid is not None:  # act on the topology judged
                args = (tid, *args[1:])
            return method(self, *args)

        wrapped = guarded(authorized)
        wrapped.operation = operation  # type: ignore[attr-defined]  # checked by a unit test
        wrapped.acts = acts  # type: ignore[attr-defined]  # this one too
        return wrapped

    return decorate
