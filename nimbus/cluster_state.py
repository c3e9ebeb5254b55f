"""Nimbus's writes of ZooKeeper, every one fenced by the leader epoch (its reads: cluster_reads.py).

On taking the lead, nimbus increments /nimbus/epoch and remembers the node's version. Every
write is a ZooKeeper transaction that first checks that version, so once another nimbus has
taken over (and bumped the epoch) a deposed leader's writes fail with FencedOut instead of
overwriting the new leader's assignments (Kafka's controller_epoch).
"""

from __future__ import annotations

import contextlib
import logging
from collections.abc import Callable, Iterable, Sequence
from typing import Any

from kazoo.client import KazooClient
from kazoo.exceptions import BadVersionError, NodeExistsError, NoNodeError, NotEmptyError

from squall.nimbus.cluster_reads import ClusterReads
from squall.nimbus.core.write_size import BUDGET, create_op
from squall.records import (
    Assignment,
    StormBase,
    encode,
)
from squall.security.topology_keys import TopologyKeys, encode_keys
from squall.zk.acl_client import repair_acls
from squall.zk.layout import ZkLayout

log = logging.getLogger("squall.nimbus")


class FencedOut(RuntimeError):
    """Another nimbus became leader after us; this one must stop writing."""


class ClusterState(ClusterReads):
    def __init__(self, zk: KazooClient, layout: ZkLayout) -> None:
        super().__init__(zk, layout)
        self.epoch = 0
        self._epoch_version = -1

    def ensure_layout(self) -> None:
        lay = self.layout
        for path in (
            lay.storms,
            lay.tasks_root,
            lay.assignments,
            lay.supervisors,
            lay.taskbeats_root,
            lay.errors_root,
            lay.consumers_root,
            lay.credentials_root,
            lay.logconfigs_root,
            lay.profilerconfig_root,
            lay.usercredentials_root,
            lay.nimbuses,
        ):
            self.zk.ensure_path(path)
        with contextlib.suppress(NodeExistsError):
            self.zk.create(lay.nimbus_epoch, b"0", makepath=True)
        repair_acls(self.zk, lay.root)  # nodes made before the cluster ran secure

    def take_lead(self) -> int:
        """Increment the epoch (compare-and-set) and fence every later write on it."""
        while True:
            data, stat = self.zk.get(self.layout.nimbus_epoch)
            epoch = _epoch_of(data) + 1
            try:
                new_stat = self.zk.set(
                    self.layout.nimbus_epoch, str(epoch).encode(), version=stat.version
                )
            except BadVersionError:
                continue
            self.epoch, self._epoch_version = epoch, new_stat.version
            return epoch

    # --- fenced writes ---

    def _commit(self, ops: Iterable[tuple[str, tuple[Any, ...]]]) -> None:
        txn = self.zk.transaction()
        txn.check(self.layout.nimbus_epoch, self._epoch_version)
        for op, args in ops:
            getattr(txn, op)(*args)
        self._check(txn.commit())

    def _check(self, results: list[Any]) -> None:
        if isinstance(results[0], Exception):
            raise FencedOut(f"epoch {self.epoch} is no longer the leader's")
        errors = [r for r in results if isinstance(r, Exception)]
        if errors:
            raise errors[0]

    def commit(self, ops: Iterable[tuple[str, tuple[Any, ...]]]) -> None:
        """Writes outside the controller's instructions (profiling requests, credentials),
        fenced by the epoch all the same."""
        self._commit(ops)

    def check_lead(self) -> None:
        """Raise FencedOut unless the epoch is still ours (fences writes outside ZooKeeper,
        such as the store's)."""
        self._commit([])

    def create_topology(
        self,
        topology_id: str,
        base: StormBase,
        tasks: dict[int, str],
        assignment: Assignment,
        keys: TopologyKeys | None = None,
    ) -> None:
        """Everything a new topology owns, in one transaction: all of it or none. `keys`
        (security on) is its CURVE keypair, written before the assignment that starts its
        workers, which read it."""
        lay = self.layout
        ops = [
            *([("create", (lay.credentials(topology_id), encode_keys(keys)))] if keys else []),
            ("create", (lay.storm(topology_id), encode(base))),
            ("create", (lay.tasks(topology_id), b"")),
            *(
                ("create", (lay.task(topology_id, task), component.encode()))
                for task, component in sorted(tasks.items())
            ),
            ("create", (lay.taskbeats(topology_id), b"")),
            # its workers (its own ZooKeeper login) may create nothing under /errors itself
            ("create", (lay.errors(topology_id), b"")),
            ("create", (lay.assignment(topology_id), encode(assignment))),
        ]
        self._commit(ops)

    def add_missing_keys(self, make: Callable[[], TopologyKeys]) -> list[str]:
        """Give every topology without a /credentials node (created in open mode) a keypair,
        so that its workers, which refuse to start without one, can start once restarted."""
        added = []
        for tid in self.storm_ids():
            path = self.layout.credentials(tid)
            if self.zk.exists(path):
                continue
            try:
                self._commit([("create", (path, encode_keys(make())))])
            except NodeExistsError:
                continue
            added.append(tid)
        return added

    def write_base(self, topology_id: str, base: StormBase) -> None:
        self._commit([("set_data", (self.layout.storm(topology_id), encode(base)))])

    def write_assignment(self, topology_id: str, assignment: Assignment) -> None:
        path = self.layout.assignment(topology_id)
        op = "set_data" if self.zk.exists(path) else "create"
        self._commit([(op, (path, encode(assignment)))])

    def write_assignments(self, assignments: Sequence[tuple[str, Assignment]]) -> None:
        """Several assignments in as few fenced transactions as fit one ZooKeeper request
        (write_size.BUDGET), all sent before any answer is awaited: a lost host's topologies
        cost two round trips and a request or two, not two round trips each, one after
        another (failover time, bench/controlplane.py). Each transaction is all or nothing."""
        if not assignments:
            return
        paths = [self.layout.assignment(tid) for tid, _ in assignments]
        present = [self.zk.exists_async(path) for path in paths]
        chunks: list[list[tuple[str, str, bytes]]] = [[]]
        size = 0
        for path, (_, assignment), exists in zip(paths, assignments, present, strict=True):
            data = encode(assignment)
            op = create_op(path, len(data))
            if chunks[-1] and size + op > BUDGET:
                chunks.append([])
                size = 0
            chunks[-1].append(("create" if exists.get() is None else "set_data", path, data))
            size += op
        pending = []
        for chunk in chunks:
            txn = self.zk.transaction()
            txn.check(self.layout.nimbus_epoch, self._epoch_version)
            for op_name, path, data in chunk:
                getattr(txn, op_name)(path, data)
            pending.append(txn.commit_async())
        for answer in [p.get() for p in pending]:  # every answer in, then the first error
            self._check(answer)

    def write_log_config(self, topology_id: str, data: bytes) -> None:
        path = self.layout.logconfig(topology_id)
        op = "set_data" if self.zk.exists(path) else "create"
        self._commit([(op, (path, data))])

    def read_log_config(self, topology_id: str) -> bytes | None:
        try:
            data, _ = self.zk.get(self.layout.logconfig(topology_id))
        except NoNodeError:
            return None
        return data

    def write_tasks(self, topology_id: str, tasks: dict[int, str], assignment: Assignment) -> None:
        """Replace /tasks/[id] children and write the assignment that uses them, together."""
        lay = self.layout
        parent = lay.tasks(topology_id)
        # the old task nodes by their child names (strings), whatever ids they hold
        ops: list[tuple[str, tuple[Any, ...]]] = [
            ("delete", (f"{parent}/{name}",)) for name in self._children(parent)
        ]
        ops += [
            ("create", (lay.task(topology_id, t), c.encode())) for t, c in sorted(tasks.items())
        ]
        path = lay.assignment(topology_id)
        ops.append(("set_data" if self.zk.exists(path) else "create", (path, encode(assignment))))
        self._commit(ops)

    def remove_topology(self, topology_id: str) -> None:
        """The fenced part removes /storms and /assignments; the leftover subtrees (tasks,
        beats, errors) are garbage after that and are deleted recursively."""
        records = self.layout.topology_records(topology_id)
        ops = [("delete", (p,)) for p in records if self.zk.exists(p)]
        if ops:
            self._commit(ops)
        for path in self.layout.topology_subtrees(topology_id):
            self._delete_subtree(path)

    def _delete_subtree(self, path: str, attempts: int = 5) -> None:
        """A worker that has not yet seen its topology go may write one more heartbeat or
        error under `path` while it is being deleted (NotEmpty): delete again, a few times."""
        for attempt in range(attempts):
            try:
                self.zk.delete(path, recursive=True)
                return
            except NotEmptyError:
                if attempt == attempts - 1:
                    raise

    def remove_orphan(self, path: str) -> None:
        """Fenced: a leader that lost the lead meanwhile must not delete what the new one
        just wrote (an assignment has no children)."""
        if self.zk.exists(path):
            self._commit([("delete", (path,))])

    def register_nimbus(self, host: str, port: int, summary: bytes) -> None:
        path = f"{self.layout.nimbuses}/{host}:{port}"
        try:
            self.zk.create(path, summary, ephemeral=True)
        except NodeExistsError:
            self.zk.delete(path)
            self.zk.create(path, summary, ephemeral=True)


def _epoch_of(data: bytes | None) -> int:
    """The epoch in /nimbus/epoch; junk there counts as 0 (the compare-and-set on the node's
    version still fences, and the next epoch overwrites the junk) instead of leaving the
    cluster without a leader."""
    text = (data or b"0").decode("ascii", "replace").strip()
    if text.isdigit() and len(text) <= 18:
        return int(text)
    log.warning("/nimbus/epoch holds %r, not an epoch; counting from 0", text[:40])
    return 0
