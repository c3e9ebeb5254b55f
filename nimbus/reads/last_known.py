"""What nimbus last read from ZooKeeper, answered while ZooKeeper cannot be reached.

A kazoo client whose connection is lost queues every request until it is back, so a Thrift
read that touched ZooKeeper during an outage waited for its end: the UI and the CLI saw
nothing (issue 35). Here the reads a Thrift call makes go first to the connection's state:
connected, they read ZooKeeper (bounded by READ_TIMEOUT_SECS, for an outage that began
mid-read) and keep what they read; not connected, they answer at once with what was kept.
ZkOutage says since when ZooKeeper has been unreachable, which the handler puts on its
answers (stale_since, stale_cause), and logs the outage once with the servers it tries.

Only the Thrift reads use this: the controller's own reads (monitor rounds, taking the lead)
still go to ZooKeeper and fail there, so no decision is made on a remembered view.
"""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Callable, Iterable
from concurrent.futures import ThreadPoolExecutor
from concurrent.futures import TimeoutError as FutureTimeout
from dataclasses import dataclass
from typing import Any, TypeVar

from kazoo.exceptions import ConnectionClosedError, ConnectionLoss, SessionExpiredError
from kazoo.handlers.threading import KazooTimeoutError
from kazoo.protocol.states import KazooState

from squall import thrift_api as T
from squall.staleness import ZOOKEEPER_UNREACHABLE

log = logging.getLogger("squall.nimbus")
R = TypeVar("R")
READ_TIMEOUT_SECS = 3.0  # one read's bound when the connection drops while it waits
CAUSE = ZOOKEEPER_UNREACHABLE
UNREACHABLE = (
    ConnectionLoss,
    SessionExpiredError,
    ConnectionClosedError,
    KazooTimeoutError,
    FutureTimeout,
)


@dataclass(frozen=True)
class Stale:
    """Since when (wall clock seconds) nimbus has answered from what it last read, and why."""

    since: float
    cause: str = CAUSE


class ZkOutage:
    """Tracks the ZooKeeper connection from kazoo's state listener: a connection lost
    (SUSPENDED or LOST) starts an outage, CONNECTED ends it; each is logged once."""

    def __init__(self, servers: str, wall: Callable[[], float] = time.time) -> None:
        self.servers = servers
        self.wall = wall
        self._since: float | None = None
        self._lock = threading.Lock()

    def listen(self, zk: Any) -> None:
        zk.add_listener(self.changed)
        if not zk.connected:
            self.lost()

    def changed(self, state: str) -> None:
        """kazoo's listener: runs on its thread, so it only notes and logs."""
        if state == KazooState.CONNECTED:
            self.back()
        else:
            self.lost()

    def lost(self) -> None:
        with self._lock:
            if self._since is not None:
                return
            self._since = self.wall()
        log.warning(
            "ZooKeeper unreachable (trying %s; check that it runs there, and "
            "storm.zookeeper.servers and storm.zookeeper.port): Thrift reads answer from what "
            "nimbus last read, marked stale, until it is back",
            self.servers,
        )

    def back(self) -> None:
        with self._lock:
            since, self._since = self._since, None
        if since is not None:
            log.warning("ZooKeeper reachable again after %.0f s", self.wall() - since)

    def stale(self) -> Stale | None:
        since = self._since
        return None if since is None else Stale(since)


def outage_refusal(method: str, stale: Stale) -> str:
    """Why `method` was refused during an outage, and what to do."""
    clock = time.strftime("%H:%M:%S", time.localtime(stale.since))
    return (
        f"{method}: {stale.cause} since {clock}, so nimbus cannot store this now; try again "
        "once ZooKeeper is back (storm.zookeeper.servers)"
    )


class CachedReads:
    """The ZooKeeper reads of the Thrift calls, each remembered under its key and answered
    from memory while `outage` lasts (what was never read: `default`)."""

    def __init__(self, state: Any, outage: ZkOutage | None = None) -> None:
        self.state = state
        self.outage = outage
        self._kept: dict[tuple[str, ...], Any] = {}
        self._pool = ThreadPoolExecutor(max_workers=4, thread_name_prefix="zk-read")

    def stale(self) -> Stale | None:
        return None if self.outage is None else self.outage.stale()

    def require_zookeeper(self, method: str) -> None:
        """Refuse `method`, at once, while ZooKeeper is unreachable: a call that must write
        there (a profile request, credentials) waited out kazoo's timeouts and then failed
        without saying why. IllegalStateException (Storm's; a Storm client whose IDL does not
        declare it gets a TApplicationException with the same text)."""
        stale = self.stale()
        if stale is not None:
            raise T.IllegalStateException(msg=outage_refusal(method, stale))

    def remembered(self, key: tuple[str, ...], read: Callable[[], R], default: R) -> R:
        """read() when ZooKeeper is reachable (and kept), else what it last returned."""
        if self.stale() is None:
            try:
                value = self._pool.submit(read).result(timeout=READ_TIMEOUT_SECS)
            except UNREACHABLE as exc:  # the listener starts the outage, not a slow read
                log.debug("a read of %s failed (%r): answering what was last read", key, exc)
            else:
                self._kept[key] = value
                return value
        return self._kept.get(key, default)

    def read_beats(self, topology_id: str) -> dict[Any, Any]:
        return self.remembered(("beats", topology_id), self._of("read_beats", topology_id), {})

    def read_errors(self, topology_id: str) -> dict[str, list[dict[str, Any]]]:
        return self.remembered(("errors", topology_id), self._of("read_errors", topology_id), {})

    def read_nimbuses(self) -> dict[str, Any]:
        return self.remembered(("nimbuses",), self._of("read_nimbuses"), {})

    def read_bases(self) -> dict[str, Any]:
        return self.remembered(("bases",), self._of("read_bases"), {})

    def read_assignments(self) -> dict[str, Any]:
        return self.remembered(("assignments",), self._of("read_assignments"), {})

    def read_supervisors(self) -> dict[str, Any]:
        return self.remembered(("supervisors",), self._of("read_supervisors"), {})

    def read_tasks(self, topology_ids: Iterable[str]) -> dict[str, dict[int, str]]:
        tids = tuple(sorted(topology_ids))
        return self.remembered(("tasks", *tids), self._of("read_tasks", tids), {})

    def _of(self, method: str, *args: Any) -> Callable[[], Any]:
        return lambda: getattr(self.state, method)(*args)
