"""Partitioned sources with the seed documents' consumer layout (Kafka's, in ZooKeeper):

    /consumers/[group]/owners/[source]/[partition]   ephemeral: the task that reads it
    /consumers/[group]/offsets/[source]/[partition]  the next line not yet fully processed

The partitions are sorted and dealt to the spout tasks in contiguous ranges (seed 000's
rebalancing algorithm). A task must own a partition before reading it, and waits until an
earlier owner's ephemeral node is gone. It commits an offset only once every line before it
was acked, so a task that moves to another worker, or restarts after SIGKILL, resumes from
where its predecessor stopped, replaying at most what was in flight.

Lines go out in batches of up to `batch_lines` (one `emit_batch`, one acking root, one
entry against topology.max.spout.pending); a failed batch is replayed whole, with the same
offsets, so a sink keyed by offset stays exact.

By default a partition ends at its end of file. With `follow=True` the files are append-only
logs, as Kafka's partitions are: the spout keeps reading what is appended, and emits a line
only once its newline is written.

A batch is the same lines whoever reads it, also after a crash, so a sink can key its
output by batch (examples/exact_wordcount.py does). A batch is the `batch_lines` lines
after the previous one. Only in follow mode can one end early, at the end of a file that is
still growing; where it ended is then stored before it is emitted (squall's addition to the
layout), for a successor to cut its replay at the same line:

    /consumers/[group]/cuts/[source]/[partition]   JSON list of early ends past the offset
"""

from __future__ import annotations

import contextlib
import json
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pyarrow as pa
from kazoo.exceptions import NodeExistsError, NoNodeError

from squall.components import Spout, TaskContext
from squall.line_reader import LineReader
from squall.validation import name_problem


def partition_range(partitions: list[str], index: int, count: int) -> list[str]:
    """Task `index` of `count` gets a contiguous slice; the first len % count get one more."""
    per, extra = divmod(len(partitions), count)
    start = index * per + min(index, extra)
    return partitions[start : start + per + (1 if index < extra else 0)]


@dataclass
class _Partition:
    name: str
    reader: LineReader
    next_offset: int
    committed: int
    written: int  # last offset stored in ZooKeeper
    cuts: list[int]  # follow mode: early batch ends past `committed`, as stored
    acked: dict[int, int] = field(default_factory=dict)  # first offset -> lines, acked
    in_flight: dict[int, pa.Array] = field(default_factory=dict)  # first offset -> lines
    exhausted: bool = False
    retry_at: float = 0.0  # follow mode: when to look for appended lines again

    def batch_end(self, batch_lines: int) -> int:
        """Where the batch starting at next_offset ends: batch_lines on, or earlier at a
        stored cut."""
        end = self.next_offset + batch_lines
        return min([c for c in self.cuts if c > self.next_offset] + [end])


class PartitionedFileSpout(Spout):
    """Emits (partition, offset, line) for every line of every file in `path`; a file is a
    partition. `group` names the consumer group whose offsets it uses. Absolute paths are
    safest: relative ones resolve against the worker's working directory. `batch_lines`
    bounds the lines of one emitted batch; `follow` keeps reading lines appended later."""

    outputs = ["partition", "offset", "line"]

    def __init__(
        self,
        path: str,
        group: str,
        source: str = "files",
        commit_secs: float = 1.0,
        batch_lines: int = 1000,
        follow: bool = False,
    ):
        super().__init__(
            path=path,
            group=group,
            source=source,
            commit_secs=commit_secs,
            batch_lines=batch_lines,
            follow=follow,
        )
        self.follow = follow
        self.path, self.group, self.source = Path(path), group, source
        self.commit_secs = commit_secs
        self.batch_lines = batch_lines
        for what, value in (("group", group), ("source", source)):
            if name_problem(value, what):
                raise ValueError(name_problem(value, what))
        if not isinstance(batch_lines, int) or batch_lines < 1:
            raise ValueError(f"batch_lines must be a positive integer, not {batch_lines!r}")

    def initialize(self, conf: dict[str, Any], context: TaskContext) -> None:
        from squall.zk_layout import ZkLayout

        if context.zk is None:
            raise RuntimeError("PartitionedFileSpout needs the worker's ZooKeeper client")
        self.zk = context.zk
        self.layout = ZkLayout(context.zk_root)
        self.task_id = context.task_id
        names = sorted(p.name for p in self.path.iterdir() if p.is_file())
        bad = [n for n in names if name_problem(n, "partition file name")]
        if bad:
            raise ValueError(name_problem(bad[0], "partition file name"))
        self.waiting = partition_range(names, context.task_index, len(context.component_tasks))
        self.owned: dict[str, _Partition] = {}
        self.replay: list[tuple[str, int]] = []
        self.turn = 0
        self.last_claim = self.last_commit = 0.0

    # --- ownership ---

    def _claim(self) -> None:
        now = time.monotonic()
        if not self.waiting or now - self.last_claim < 0.5:
            return
        self.last_claim = now
        for name in list(self.waiting):
            owner = self.layout.consumer_owner(self.group, self.source, name)
            try:
                self.zk.create(owner, str(self.task_id).encode(), ephemeral=True, makepath=True)
            except NodeExistsError:
                continue  # the previous owner has not let go yet: retry later
            self.waiting.remove(name)
            self.owned[name] = self._open(name)

    def _open(self, name: str) -> _Partition:
        try:
            offset = int(self.zk.get(self._path("offsets", name))[0] or b"0")
        except NoNodeError:
            offset = 0
        try:
            cuts = [c for c in json.loads(self.zk.get(self._path("cuts", name))[0]) if c > offset]
        except NoNodeError:
            cuts = []
        reader = LineReader(self.path / name, self.follow)
        reader.skip(offset)
        return _Partition(name, reader, offset, offset, offset, cuts)

    def _path(self, kind: str, name: str) -> str:
        if kind == "offsets":
            return self.layout.consumer_offset(self.group, self.source, name)
        return self.layout.consumer_cuts(self.group, self.source, name)

    def _store(self, kind: str, name: str, value: bytes) -> None:
        path = self._path(kind, name)
        try:
            self.zk.set(path, value)
        except NoNodeError:
            self.zk.create(path, value, makepath=True)

    # --- emitting ---

    def next_tuple(self) -> bool:
        self._claim()
        self._commit()
        if self.replay:
            name, first = self.replay.pop()
            self._emit(name, first, self.owned[name].in_flight[first])
            return True
        now = time.monotonic()
        readers = [p for p in self.owned.values() if not p.exhausted and p.retry_at <= now]
        if not readers:
            return False
        part = readers[self.turn % len(readers)]
        self.turn += 1
        lines = self._read(part, now)
        if not len(lines):
            return False
        first = part.next_offset
        part.next_offset += len(lines)
        part.in_flight[first] = lines
        self._emit(part.name, first, lines)
        return True

    def _read(self, part: _Partition, now: float) -> pa.Array:
        wanted = part.batch_end(self.batch_lines) - part.next_offset
        lines = part.reader.read(wanted)
        if len(lines) < wanted and part.reader.at_end:  # for now, or for good
            part.exhausted = not self.follow
            part.retry_at = now + 0.02
            if self.follow and len(lines):
                part.cuts.append(part.next_offset + len(lines))
                self._store("cuts", part.name, json.dumps(part.cuts).encode())
        return lines

    def _emit(self, name: str, first: int, lines: pa.Array) -> None:
        columns = {
            "partition": pa.repeat(pa.scalar(name), len(lines)),
            "offset": pa.array(range(first, first + len(lines)), pa.int64()),
            "line": lines,
        }
        self.emit_batch(columns, msg_id=(name, first))

    def ack(self, msg_id: tuple[str, int]) -> None:
        name, first = msg_id
        part = self.owned[name]
        lines = part.in_flight.pop(first, None)
        if lines is None:
            return  # a verdict for a batch already acked: nothing more to commit
        part.acked[first] = len(lines)
        while part.committed in part.acked:
            part.committed += part.acked.pop(part.committed)

    def fail(self, msg_id: tuple[str, int]) -> None:
        self.replay.append(msg_id)

    # --- offsets ---

    def _commit(self, force: bool = False) -> None:
        now = time.monotonic()
        if not force and now - self.last_commit < self.commit_secs:
            return
        self.last_commit = now
        for part in self.owned.values():
            if part.committed != part.written:
                self._store("offsets", part.name, str(part.committed).encode())
                part.written = part.committed
                if part.cuts and part.cuts[0] <= part.committed:
                    part.cuts = [c for c in part.cuts if c > part.committed]
                    self._store("cuts", part.name, json.dumps(part.cuts).encode())

    def cleanup(self) -> None:
        self._commit(force=True)
        for part in self.owned.values():
            part.reader.close()
            owner = self.layout.consumer_owner(self.group, self.source, part.name)
            with contextlib.suppress(NoNodeError):
                self.zk.delete(owner)
