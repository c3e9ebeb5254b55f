"""Who is asking: the authenticated identity and address of the Thrift request being
handled on this thread.

The server binds a RequestContext around each processor.process call (from the TLS peer
certificate); the handler's authorization reads it with current(). A thread-local, because
handler methods are called by thriftpy2's processor with the request's arguments only.
"""

from __future__ import annotations

import contextlib
import threading
from collections.abc import Iterator
from dataclasses import dataclass


@dataclass(frozen=True)
class RequestContext:
    principal: str | None  # the client certificate's CN; None in open mode
    address: str  # the peer's host:port, for the log


ANONYMOUS = RequestContext(principal=None, address="unknown")
_local = threading.local()


@contextlib.contextmanager
def bind(ctx: RequestContext) -> Iterator[RequestContext]:
    """Make `ctx` current() on this thread until the block ends (nesting restores)."""
    previous = getattr(_local, "ctx", None)
    _local.ctx = ctx
    try:
        yield ctx
    finally:
        _local.ctx = previous


def current() -> RequestContext:
    """The bound context; ANONYMOUS outside any request (e.g. a direct call in a test)."""
    return getattr(_local, "ctx", None) or ANONYMOUS
