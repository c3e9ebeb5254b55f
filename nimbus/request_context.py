"""Who is asking: the identity and address behind the Thrift call a handler thread serves.

The server binds a context around each handler call, so nimbus's handler and authorizer can
ask `current()` without the identity travelling through every method's arguments (Storm's
ReqContext does the same). A thread-local, because calls run on a pool of threads.
"""

from __future__ import annotations

import contextlib
import threading
from collections.abc import Iterator
from dataclasses import dataclass


@dataclass(frozen=True)
class RequestContext:
    principal: str | None  # the TLS client certificate's subject CN; None without TLS
    address: str  # the peer's address as host:port


_local = threading.local()
_NOBODY = RequestContext(principal=None, address="")


@contextlib.contextmanager
def bind(ctx: RequestContext) -> Iterator[RequestContext]:
    """Make `ctx` the current context of this thread for the duration of the block."""
    previous = getattr(_local, "ctx", None)
    _local.ctx = ctx
    try:
        yield ctx
    finally:
        _local.ctx = previous


def current() -> RequestContext:
    """The context bound on this thread; outside a request, an anonymous one."""
    ctx = getattr(_local, "ctx", None)
    return ctx if ctx is not None else _NOBODY
