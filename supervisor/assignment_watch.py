"""The supervisor's copy of /assignments, kept by watches (the imperative shell around
sync.assignment_reads).

A watch on /assignments (its children) and one on each assignment note what changed and wake
the sync loop; the loop then re-reads only those nodes. Every
supervisor.assignments.full.read.secs (and after a lost session) it re-reads them all, in
case a watch was missed. Watches run on kazoo's thread: they only record names
under the lock; every read happens on the sync loop's thread.

An assignment node that is there but cannot be read (a newer nimbus's format, a write by
someone with no business writing it) is not a deleted topology: the last assignment read
stays, and `unreadable` says why, for the topology's errors. Dropping it stopped every
worker of the topology, a stronger move than the epoch check lets a forged write make.
"""

from __future__ import annotations

import functools
import threading
from typing import Any

from kazoo.client import KazooClient

from squall.records import Assignment
from squall.zk import connection as zk_mod
from squall.zk.layout import ZkLayout

from .sync import assignment_reads


class AssignmentWatch:
    def __init__(
        self, zk: KazooClient, layout: ZkLayout, full_every: float, wake: threading.Event
    ) -> None:
        self.zk, self.layout, self.wake = zk, layout, wake
        self.full_every = full_every  # supervisor.assignments.full.read.secs
        self.lock = threading.Lock()
        self.children: set[str] | None = None  # None until the children watch first fires
        self.fired: set[str] = set()
        self.watched: set[str] = set()
        self.next_full = float("-inf")
        self.assignments: dict[str, Assignment] = {}
        self.unreadable: dict[str, str] = {}  # there but not understood when last read: why
        self.reads = 0  # nodes read so far (the bench and tests count them)

    def start(self) -> None:
        @self.zk.ChildrenWatch(self.layout.assignments)
        def _children(children: list[str]) -> None:
            with self.lock:
                self.children = set(children)
                new = set(children) - self.watched
                self.watched |= new
            for tid in sorted(new):
                self.zk.DataWatch(self.layout.assignment(tid))(functools.partial(self._fired, tid))
            self.wake.set()

    def _fired(self, tid: str, _data: Any, _stat: Any, _event: Any = None) -> None:
        with self.lock:
            self.fired.add(tid)
        self.wake.set()

    def read_all_next(self) -> None:
        """The next refresh re-reads every assignment (a session was lost)."""
        self.next_full = float("-inf")

    def refresh(self, now: float) -> bool:
        """Bring `assignments` up to date; True when anything was read or dropped."""
        with self.lock:
            fired, self.fired = self.fired, set()
            children = None if self.children is None else set(self.children)
        todo = assignment_reads(self.assignments, children, fired, now >= self.next_full)
        if todo.full:
            self.next_full = now + self.full_every
            names = zk_mod.children(self.zk, self.layout.assignments)
            self.unreadable = {}
            self.assignments = self._read(names)
            return True
        if not todo.changed:
            return False
        gone = todo.drop | todo.read
        kept = {t: a for t, a in self.assignments.items() if t not in gone}
        self.unreadable = {t: why for t, why in self.unreadable.items() if t not in gone}
        self.assignments = {**kept, **self._read(todo.read)}
        return True

    def _read(self, names: Any) -> dict[str, Assignment]:
        names = list(names)
        self.reads += len(names)
        parent = self.layout.assignments
        found, unreadable = zk_mod.read_named_or_why(self.zk, Assignment, parent, names)
        kept = {t: self.assignments[t] for t in unreadable if t in self.assignments}
        self.unreadable = {**self.unreadable, **unreadable}
        return {**found, **kept}
