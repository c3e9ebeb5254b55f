"""The worker's dealings with ZooKeeper: what it reads at start (its assignment, the task ->
component map, the topology's CURVE keys), the watches of /storms and /assignments (turned
into calls of the worker's callbacks), its heartbeats to /taskbeats and its error reports to
/errors."""

from __future__ import annotations

import contextlib
import logging
import threading
import time
from collections.abc import Callable
from typing import Any

from kazoo.client import KazooClient
from kazoo.exceptions import (
    ConnectionLoss,
    KazooException,
    NoAuthError,
    NodeExistsError,
    NoNodeError,
    OperationTimeoutError,
    SessionExpiredError,
)

from squall import error_nodes
from squall.records import Assignment, StormBase, WorkerBeat, decode, encode, trusted_epoch
from squall.security.topology_keys import TopologyKeys, TopologyKeysError, decode_keys
from squall.zk import connection as zk_mod
from squall.zk.layout import ZkLayout

from .beat_fit import fitted

# ZooKeeper is away (no quorum, a reconnect, an expired session): what the worker defers
ZOOKEEPER_AWAY = (ConnectionLoss, OperationTimeoutError, SessionExpiredError)
log = logging.getLogger("squall.worker")
# Longest error text written: the root cause comes first, so the cap cuts only stack frames;
# ten of these keep an /errors node near 20 KB.
MAX_ERROR_CHARS = 2048


class ZooKeeperAgent:
    def __init__(self, zk: KazooClient, layout: ZkLayout, tid: str, slot: tuple[str, int]):
        self.zk = zk
        self.layout = layout
        self.tid = tid
        self.slot = slot
        self.seq = 0
        self.beat_cut: str | None = None  # what the last beat left out to fit, if anything
        # an assignment change the watch saw but could not judge (ZooKeeper went away while
        # it read the epoch): kazoo's watch has recorded the version and will not call back
        # for it again, so the worker's round judges it (`recheck_assignment`)
        self.missed_assignment = False
        self._judging = threading.Lock()
        self._judged = -1  # the mzxid of the newest assignment handed on
        self._on_assignment: Callable[[Assignment | None], bool] = lambda _: True

    def assignment(self) -> Assignment | None:
        """This topology's assignment, or None when it is missing, unreadable or of an epoch
        no nimbus wrote (see `trusted`)."""
        try:
            assignment = zk_mod.read_record(self.zk, Assignment, self.layout.assignment(self.tid))
        except ValueError as exc:
            log.warning("unreadable assignment: %s", exc)
            return None
        return assignment if assignment is not None and self.trusted(assignment) else None

    def trusted(self, assignment: Assignment) -> bool:
        """Whether the assignment's epoch is one a nimbus can have written (at most the current
        /nimbus/epoch); a forged one is logged and not acted on."""
        current = zk_mod.read_epoch(self.zk, self.layout)
        if current is not None and trusted_epoch(assignment.epoch, current):
            return True
        log.warning(
            "ignoring an assignment of epoch %d: the current epoch is %s", assignment.epoch, current
        )
        return False

    def beats(self) -> dict[str, WorkerBeat]:
        """Every worker's latest heartbeat of this topology by node name (`beat_name`); an
        unreadable one is skipped."""
        return zk_mod.read_records(self.zk, WorkerBeat, self.layout.taskbeats(self.tid))

    def topology_keys(self) -> TopologyKeys:
        """The topology's CURVE keypair. Missing or unreadable is fatal to the worker's start
        (TopologyKeysError): a secure worker never falls back to plain ZeroMQ."""
        path = self.layout.credentials(self.tid)
        try:
            data, _ = self.zk.get(path)
        except NoNodeError:
            raise TopologyKeysError(f"{path} is missing: no CURVE keys for {self.tid}") from None
        return decode_keys(data, path)

    def task_components(self) -> dict[int, str]:
        return zk_mod.read_task_components(self.zk, [self.layout.tasks(self.tid)])[0]

    def watch(
        self,
        on_status: Callable[[StormBase | None], None],
        on_assignment: Callable[[Assignment | None], bool],
    ) -> None:
        """Call `on_status` with each new /storms record (None: the topology is gone) and
        `on_assignment` with each new assignment; its False ends that watch."""

        def storm_changed(data: bytes | None, _stat: Any, _event: Any = None) -> bool | None:
            if data is None:
                on_status(None)
                return False
            try:
                base = decode(StormBase, data, self.layout.storm(self.tid))
            except ValueError as exc:
                log.warning("ignoring an unreadable topology record: %s", exc)
                return None
            on_status(base)
            return None

        def assignment_changed(data: bytes | None, stat: Any, _event: Any = None) -> bool | None:
            if data is None:
                on_assignment(None)
                return False
            return self._judge(data, stat.mzxid)

        self._on_assignment = on_assignment
        self.zk.DataWatch(self.layout.storm(self.tid))(storm_changed)
        self.zk.DataWatch(self.layout.assignment(self.tid))(assignment_changed)

    def _judge(self, data: bytes, mzxid: int) -> bool | None:
        """Hand a trusted assignment newer than the last one handed on to `on_assignment`
        (from the watch or the worker's round: one at a time, never an older one after a
        newer); False when that ends the watch."""
        try:
            assignment = decode(Assignment, data, self.layout.assignment(self.tid))
        except ValueError as exc:
            log.warning("ignoring an unreadable assignment: %s", exc)
            return None
        try:
            trusted = self.trusted(assignment)
        except ZOOKEEPER_AWAY as exc:
            log.warning("cannot check an assignment's epoch now (%s): later", type(exc).__name__)
            self.missed_assignment = True
            return None
        with self._judging:
            if not trusted or mzxid <= self._judged:
                return None
            self._judged = mzxid
            return None if self._on_assignment(assignment) else False

    def recheck_assignment(self) -> None:
        """Judge the assignment again when the watch could not (on the worker's round, which
        is skipped while ZooKeeper is away: what this raises then keeps it due)."""
        if not self.missed_assignment:
            return
        self.missed_assignment = False
        try:
            data, stat = self.zk.get(self.layout.assignment(self.tid))
        except NoNodeError:
            return  # the watch sees the deletion
        except ZOOKEEPER_AWAY:
            self.missed_assignment = True
            raise
        self._judge(data, stat.mzxid)

    def beat(self, uptime_secs: int, tasks: dict[int, dict[str, Any]]) -> None:
        self.seq += 1
        now = int(time.time())
        data, cut = fitted(
            tasks,
            lambda entries: encode(
                WorkerBeat(self.seq, now, uptime_secs, {t: dict(s) for t, s in entries.items()})
            ),
        )
        if cut != self.beat_cut:
            if cut is not None:
                log.warning("heartbeat over ZooKeeper's request size: it leaves out %s", cut)
            self.beat_cut = cut
        path = self.layout.taskbeat(self.tid, *self.slot)
        try:
            self.zk.set(path, data)
        except NoAuthError:
            # left by a worker that logged in as its supervisor (before per-topology logins):
            # this topology's login may remove it and make its own
            self.zk.delete(path)
            with contextlib.suppress(NodeExistsError, NoNodeError):
                self.zk.create(path, data)
        except NoNodeError:
            # NoNode on create: the topology was removed; the storm watch stops us.
            with contextlib.suppress(NodeExistsError, NoNodeError):
                self.zk.create(path, data)

    def report_error(self, component: str, text: str, host: str) -> None:
        path = f"{self.layout.errors(self.tid)}/{component}"
        entry = error_nodes.entry(capped(text), host, self.slot[1])
        try:
            # /errors/[id] goes with its topology: made only while the topology is there
            # (a report written as the worker stops must not leave an orphan)
            written = error_nodes.append(self.zk, path, entry, make_parents=False)
            alive = self.layout.storm(self.tid)
            if not written and not error_nodes.create_while(self.zk, alive, path, entry):
                error_nodes.append(self.zk, path, entry, make_parents=False)  # made meanwhile
        except ZOOKEEPER_AWAY:
            raise  # the caller keeps it for the next round
        except (ValueError, KazooException) as exc:  # refused (no access, say): that report
            log.warning("cannot record an error of %s: %s", component, exc)  # is lost

    def close(self) -> None:
        self.zk.stop()
        self.zk.close()


def capped(text: str) -> str:
    """The head of `text` within MAX_ERROR_CHARS, marked when cut."""
    if len(text) <= MAX_ERROR_CHARS:
        return text
    return text[: MAX_ERROR_CHARS - 16] + "\n... (truncated)"
