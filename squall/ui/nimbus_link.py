"""The UI daemon's only I/O towards the cluster: Thrift calls to the nimbus leader, made as
the UI's own identity (certificate "ui"), a fresh connection per request as Storm's UI does.

The leader's address is remembered and looked up again when a call cannot reach it, so a
failover shows as one slow request. Not reaching any nimbus is NimbusUnavailable (the app
answers 503); Thrift's typed refusals (NotAlive, Authorization...) pass through unchanged.
"""

from __future__ import annotations

import socket
import threading
from collections.abc import Callable
from typing import Any, TypeVar

from thriftpy2.transport import TTransportException

from squall.client import NoLeaderError, nimbus_address, nimbus_client
from squall.security.mode import security_on

UI_IDENTITY = "ui"
R = TypeVar("R")
UNREACHABLE = (NoLeaderError, ConnectionError, TTransportException, socket.timeout, OSError)


class NimbusUnavailable(RuntimeError):
    """No nimbus leader answered."""


class NimbusLink:
    def __init__(self, conf: dict[str, Any], timeout_secs: float = 10) -> None:
        self.conf = conf
        self.timeout_secs = timeout_secs
        self.identity = UI_IDENTITY if security_on(conf) else None
        self._leader: tuple[str, int] | None = None
        self._lock = threading.Lock()

    def _address(self, fresh: bool) -> tuple[str, int]:
        with self._lock:
            if fresh or self._leader is None:
                self._leader = nimbus_address(self.conf, self.timeout_secs, self.identity)
            return self._leader

    def call(self, fn: Callable[[Any], R]) -> R:
        """fn(client) on a connection to the leader; one retry after a fresh leader lookup."""
        problem: Exception | None = None
        for fresh in (False, True):
            try:
                address = self._address(fresh)
                with nimbus_client(
                    *address, self.timeout_secs, conf=self.conf, identity=self.identity
                ) as client:
                    return fn(client)
            except UNREACHABLE as exc:
                problem = exc
        raise NimbusUnavailable(f"nimbus is unreachable: {problem or 'no answer'}")
