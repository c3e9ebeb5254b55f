"""The partition ownership recipe's shell: kazoo callbacks in, ZooKeeper calls out.

Callbacks (the session listener, node watches) arrive on kazoo's thread; they only feed
events to `ownership.step` under a lock, so `may_read` turns False the moment the connection
drops. The instructions are queued and carried out by `poll()` on the reading thread: the
ZooKeeper calls (claim, watch, delete) here, and the reading ones (start, resume, stop, drop)
returned to the caller, which owns the position. Nothing polls ZooKeeper: a waiting task
watches the current owner's node and claims when it is deleted.
"""

from __future__ import annotations

import threading
from collections import deque

from kazoo.client import KazooClient, KazooState
from kazoo.exceptions import KazooException, NodeExistsError, NoNodeError
from kazoo.protocol.states import EventType, WatchedEvent

from squall.recipes import ownership as o

ReadingInstruction = o.StartReading | o.ResumeReading | o.StopReading | o.DropPosition


class PartitionOwner:
    """One partition's ownership for one task. Subclasses say how to claim, watch and delete
    the owner node; the decisions are `ownership.step`'s."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._state, first = o.START
        self._todo: deque[o.Instruction] = deque(first)

    @property
    def state(self) -> o.Ownership:
        return self._state

    def may_read(self) -> bool:
        return o.may_read(self._state)

    def handle(self, event: o.Event) -> None:
        """Apply an event now (any thread); its instructions run at the next `poll`."""
        with self._lock:
            self._state, todo = o.step(self._state, event)
            self._todo.extend(todo)

    def poll(self) -> list[ReadingInstruction]:
        """Carry out the queued ZooKeeper instructions (and those they lead to) on the calling
        thread; return the reading instructions, in order, for the caller to apply."""
        reading: list[ReadingInstruction] = []
        while True:
            with self._lock:
                if not self._todo:
                    return reading
                instruction = self._todo.popleft()
            match instruction:
                case o.TryClaim():
                    self._claim()
                case o.WatchOwner():
                    self._watch()
                case o.DeleteOwner():
                    self._delete()
                case o.StartReading() | o.ResumeReading() | o.StopReading() | o.DropPosition():
                    reading.append(instruction)
                case _:
                    raise TypeError(f"unknown ownership instruction {instruction!r}")

    def release(self) -> None:
        """Give the partition back (deleting our node if we hold it) and stop listening."""
        self.handle(o.Release())
        self.poll()
        self._close()

    def _queue(self, instruction: o.Instruction) -> None:
        with self._lock:
            self._todo.append(instruction)

    def _close(self) -> None:
        """Stop listening to the session."""

    def _claim(self) -> None:  # pragma: no cover - abstract
        raise NotImplementedError

    def _watch(self) -> None:  # pragma: no cover - abstract
        raise NotImplementedError

    def _delete(self) -> None:  # pragma: no cover - abstract
        raise NotImplementedError


class ZkPartitionOwner(PartitionOwner):
    """Ownership through an ephemeral node at `path` holding `token` (the task id and a
    random part, so a claim whose answer was lost with the connection is recognised as ours,
    and two tasks sharing a session are still told apart)."""

    def __init__(self, zk: KazooClient, path: str, token: str) -> None:
        super().__init__()
        self.zk, self.path, self.token = zk, path, token.encode()
        zk.add_listener(self._session_changed)

    def _session_changed(self, state: str) -> None:
        match state:
            case KazooState.SUSPENDED:
                self.handle(o.Suspended())
            case KazooState.LOST:
                self.handle(o.SessionLost())
            case KazooState.CONNECTED:
                self.handle(o.Reconnected())

    def _node_changed(self, event: WatchedEvent) -> None:
        if event.type == EventType.DELETED:
            self.handle(o.OwnerGone())
        elif event.type != EventType.NONE:  # NONE: the connection dropped; the listener knows
            self._queue(o.WatchOwner())

    def _connected(self) -> bool:
        return self.zk.state == KazooState.CONNECTED

    def _claim(self) -> None:
        if not self._connected():
            return  # claimed again on Reconnected
        try:
            self.zk.create(self.path, self.token, ephemeral=True, makepath=True)
        except NodeExistsError:
            self._claim_taken()
        except KazooException:
            return  # the connection dropped meanwhile: claimed again on Reconnected
        else:
            self.handle(o.ClaimWon())

    def _claim_taken(self) -> None:
        try:
            data, _ = self.zk.get(self.path)
        except NoNodeError:
            self.handle(o.OwnerGone())
        except KazooException:
            return
        else:
            self.handle(o.ClaimWon() if data == self.token else o.ClaimRefused())

    def _watch(self) -> None:
        if not self._connected():
            return  # watched again on Reconnected
        try:
            stat = self.zk.exists(self.path, watch=self._node_changed)
        except KazooException:
            return
        if stat is None:
            self.handle(o.OwnerGone())

    def _close(self) -> None:
        self.zk.remove_listener(self._session_changed)

    def _delete(self) -> None:
        if not self._connected():
            return  # goes with the session
        try:
            data, stat = self.zk.get(self.path)
            if data == self.token:
                self.zk.delete(self.path, version=stat.version)
        except KazooException:
            pass  # gone already, or goes with the session


def owner_token(task_id: int) -> str:
    import uuid

    return f"{task_id} {uuid.uuid4().hex}"
