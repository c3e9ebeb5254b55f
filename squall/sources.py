"""Partitioned sources with the seed documents' consumer layout (Kafka's, in ZooKeeper):

    /consumers/[group]/owners/[source]/[partition]   ephemeral: the task that reads it
    /consumers/[group]/offsets/[source]/[partition]  the next line not yet fully processed

The partitions are sorted and dealt to the spout tasks in contiguous ranges (seed 000's
rebalancing algorithm). A task must own a partition before reading it, and waits until an
earlier owner's ephemeral node is gone. An offset is committed only once every line before it
was acked, so a task that moves to another worker, or restarts after SIGKILL, resumes from
where its predecessor stopped, replaying at most what was in flight. The spout only reads
files: ownership, offsets, cuts and replays are the runtime's (squall/source_partitions.py,
through `TaskContext.coordination`), shared with any other partitioned source.

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

import time
from pathlib import Path
from typing import Any

import pyarrow as pa

from squall.components import Spout, TaskContext
from squall.line_reader import LineReader
from squall.source_partitions import SourcePartitions
from squall.validation import name_problem


def partition_range(partitions: list[str], index: int, count: int) -> list[str]:
    """Task `index` of `count` gets a contiguous slice; the first len % count get one more."""
    per, extra = divmod(len(partitions), count)
    start = index * per + min(index, extra)
    return partitions[start : start + per + (1 if index < extra else 0)]


class _File:
    """A partition being read: its reader, and when to read it again."""

    def __init__(self, path: Path, offset: int, follow: bool) -> None:
        self.reader = LineReader(path, follow)
        self.reader.skip(offset)
        self.exhausted = False
        self.retry_at = 0.0  # follow mode: when to look for appended lines again


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
        if context.coordination is None:
            raise RuntimeError("PartitionedFileSpout needs TaskContext.coordination")
        names = sorted(p.name for p in self.path.iterdir() if p.is_file())
        bad = [n for n in names if name_problem(n, "partition file name")]
        if bad:
            raise ValueError(name_problem(bad[0], "partition file name"))
        mine = partition_range(names, context.task_index, len(context.component_tasks))
        self.partitions = SourcePartitions(
            context.coordination, self.group, self.source, mine, self.commit_secs
        )
        self.files: dict[str, _File] = {}
        self.turn = 0

    def next_tuple(self) -> bool:
        now = time.monotonic()
        changes = self.partitions.poll(now)
        for name in changes.closed:
            self.files.pop(name).reader.close()
        for name, offset in changes.opened.items():
            self.files[name] = _File(self.path / name, offset, self.follow)
        replay = self.partitions.next_replay()
        if replay is not None:
            self._emit(replay.partition, replay.first, replay.records)
            return True
        names = [
            n
            for n in self.partitions.readable()
            if not self.files[n].exhausted and self.files[n].retry_at <= now
        ]
        if not names:
            return False
        name = names[self.turn % len(names)]
        self.turn += 1
        return self._read(name, now)

    def _read(self, name: str, now: float) -> bool:
        file, first = self.files[name], self.partitions.next_offset(name)
        wanted = self.partitions.batch_end(name, self.batch_lines) - first
        lines = file.reader.read(wanted)
        cut = False
        if len(lines) < wanted and file.reader.at_end:  # for now, or for good
            file.exhausted = not self.follow
            file.retry_at = now + 0.02
            cut = self.follow
        if not len(lines):
            return False
        if self.partitions.emitted(name, first + len(lines), lines, cut) is None:
            return False  # the partition was taken from us: closed at the next poll
        self._emit(name, first, lines)
        return True

    def _emit(self, name: str, first: int, lines: pa.Array) -> None:
        columns = {
            "partition": pa.repeat(pa.scalar(name), len(lines)),
            "offset": pa.array(range(first, first + len(lines)), pa.int64()),
            "line": lines,
        }
        self.emit_batch(columns, msg_id=(name, first))

    def ack(self, msg_id: tuple[str, int]) -> None:
        self.partitions.acked(*msg_id)

    def fail(self, msg_id: tuple[str, int]) -> None:
        self.partitions.failed(*msg_id)

    def cleanup(self) -> None:
        self.partitions.close()
        for file in self.files.values():
            file.reader.close()
