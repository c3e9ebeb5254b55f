"""The coordination of squall/coordination.py in one process, without ZooKeeper: for unit
tests and for running a topology in-process. It keeps ZooKeeper's semantics that matter to the
recipes (an owner node per partition that goes with its session, watches on it, versioned
position writes), and a session can be suspended, expired and reconnected by hand, so tests
can drive the ownership recipe through a session loss."""

from __future__ import annotations

import itertools
import threading
from collections.abc import Callable
from dataclasses import dataclass, field

from squall.recipes import ownership as o
from squall.recipes.offset_store import PositionNotStored
from squall.recipes.offsets import Position
from squall.recipes.owner import PartitionOwner

Key = tuple[str, str, str]  # group, source, partition


@dataclass
class InMemoryRegistry:
    """What a ZooKeeper ensemble would hold, shared by the sessions of one process."""

    lock: threading.RLock = field(default_factory=threading.RLock)
    owners: dict[Key, tuple[int, str]] = field(default_factory=dict)  # -> (session, token)
    watchers: dict[Key, list[Callable[[], None]]] = field(default_factory=dict)  # owners.
    offsets: dict[Key, tuple[int, int]] = field(default_factory=dict)  # -> (offset, version)
    cuts: dict[Key, tuple[tuple[int, ...], int]] = field(default_factory=dict)
    sessions: itertools.count = field(default_factory=lambda: itertools.count(1))

    def delete_owner(self, key: Key) -> None:
        with self.lock:
            self.owners.pop(key, None)
            fire = self.watchers.pop(key, [])
        for watcher in fire:
            watcher()


class InMemoryCoordination:
    """One session's view of a registry; tasks that should see each other share a registry
    (a session each, or one for all, as tasks of one worker share its ZooKeeper session)."""

    def __init__(self, registry: InMemoryRegistry | None = None) -> None:
        self.registry = registry or InMemoryRegistry()
        self.session = next(self.registry.sessions)
        self.connected = True
        self.expired = False
        self._owners: list[InMemoryPartitionOwner] = []
        self._tokens = itertools.count(1)

    def owner(self, group: str, source: str, partition: str) -> PartitionOwner:
        owner = InMemoryPartitionOwner(self, (group, source, partition), next(self._tokens))
        self._owners.append(owner)
        return owner

    def offsets(self, group: str, source: str, partition: str) -> InMemoryOffsetStore:
        return InMemoryOffsetStore(self, (group, source, partition))

    # --- a session's fate, by hand, as kazoo reports it ---

    def suspend(self) -> None:
        """The connection drops; the session lives on at the server for now. Its watches
        are gone, as kazoo drops them with the connection (set again on reconnection)."""
        self.connected = False
        with self.registry.lock:
            for watchers in self.registry.watchers.values():
                watchers[:] = [
                    w for w in watchers if getattr(w, "__self__", None) not in self._owners
                ]
        self._tell(o.Suspended())

    def reconnect(self) -> None:
        """The connection is back: within the session, or, if it expired meanwhile, with
        SessionLost first and then a new session."""
        self.connected = True
        if self.expired:
            self.expired = False
            self._tell(o.SessionLost())
        self._tell(o.Reconnected())

    def expire(self) -> None:
        """The server expires the session: its owner nodes go (their watchers fire). A
        connected client hears it at once and reconnects; a suspended one on reconnecting."""
        with self.registry.lock:
            mine = [k for k, (s, _) in self.registry.owners.items() if s == self.session]
            self.session = next(self.registry.sessions)
        for key in mine:
            self.registry.delete_owner(key)
        self.expired = True
        if self.connected:
            self.reconnect()

    def _tell(self, event: o.Event) -> None:
        for owner in list(self._owners):
            owner.handle(event)


class InMemoryPartitionOwner(PartitionOwner):
    def __init__(self, coordination: InMemoryCoordination, key: Key, serial: int) -> None:
        super().__init__()
        self.coordination, self.key, self.token = coordination, key, f"{id(self)}-{serial}"

    def _claim(self) -> None:
        c = self.coordination
        if not c.connected:
            return
        with c.registry.lock:
            holder = c.registry.owners.setdefault(self.key, (c.session, self.token))
        self.handle(o.ClaimWon() if holder == (c.session, self.token) else o.ClaimRefused())

    def _watch(self) -> None:
        c = self.coordination
        if not c.connected:
            return
        with c.registry.lock:
            present = self.key in c.registry.owners
            watchers = c.registry.watchers.setdefault(self.key, [])
            if present and self._node_deleted not in watchers:
                watchers.append(self._node_deleted)
        if not present:
            self.handle(o.OwnerGone())

    def _node_deleted(self) -> None:
        self.handle(o.OwnerGone())

    def _delete(self) -> None:
        c = self.coordination
        with c.registry.lock:
            ours = c.registry.owners.get(self.key) == (c.session, self.token)
        if ours and c.connected:
            c.registry.delete_owner(self.key)

    def _close(self) -> None:
        self.coordination._owners.remove(self)


class InMemoryOffsetStore:
    def __init__(self, coordination: InMemoryCoordination, key: Key) -> None:
        self.coordination, self.registry, self.key = coordination, coordination.registry, key
        self.versions: dict[str, int | None] = {"offset": None, "cuts": None}

    def load(self) -> Position:
        with self.registry.lock:
            offset, self.versions["offset"] = self.registry.offsets.get(self.key, (0, None))
            cuts, self.versions["cuts"] = self.registry.cuts.get(self.key, ((), None))
        return Position(offset, cuts)

    def _write(self, table: dict, kind: str, value: object) -> None:
        if not self.coordination.connected:
            raise PositionNotStored(f"{kind} of {self.key}: not connected")
        with self.registry.lock:
            stored = table.get(self.key)
            if (stored[1] if stored else None) != self.versions[kind]:
                raise PositionNotStored(f"{kind} of {self.key}")
            version = 0 if stored is None else stored[1] + 1
            table[self.key] = (value, version)
            self.versions[kind] = version

    def save_offset(self, offset: int) -> None:
        self._write(self.registry.offsets, "offset", offset)

    def save_cuts(self, cuts: tuple[int, ...]) -> None:
        self._write(self.registry.cuts, "cuts", tuple(cuts))
