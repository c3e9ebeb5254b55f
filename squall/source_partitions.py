"""What the runtime does for every partitioned source: own partitions, remember what was
emitted, commit what was acked, replay what failed.

A source (sources.PartitionedFileSpout, or a Kafka-like one) only reads. Per batch it asks
where the batch may end (`batch_end`), reports the batch (`emitted`, with the records to
replay and whether it ended early), and forwards the verdicts (`acked`, `failed`). Everything
else is here, once: the ownership recipe per partition (reading only while OWNED), the offset
tracker, conditional writes of the committed offset and cuts every `commit_secs`, and the
replays. `poll(now)` tells the source which partitions to (re)open at which offset and which
to close, because ownership was won, or lost with the session.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from squall.coordination import SourceCoordination
from squall.recipes import ownership as o
from squall.recipes.offset_store import OffsetStore, PositionNotStored
from squall.recipes.offsets import OffsetTracker
from squall.recipes.owner import PartitionOwner


@dataclass(frozen=True)
class Changes:
    """From one `poll`: partitions to open at an offset (won, or won again after a loss) and
    partitions to close (lost: what was read and not committed may be read by a successor)."""

    opened: dict[str, int] = field(default_factory=dict)
    closed: tuple[str, ...] = ()


@dataclass(frozen=True)
class Replay:
    partition: str
    first: int
    records: Any


@dataclass
class _Partition:
    owner: PartitionOwner
    store: OffsetStore
    tracker: OffsetTracker | None = None  # None until a position is loaded
    stored_offset: int = 0  # as last loaded or written
    stored_cuts: tuple[int, ...] = ()
    records: dict[int, Any] = field(default_factory=dict)  # first -> records, in flight


class SourcePartitions:
    def __init__(
        self,
        coordination: SourceCoordination,
        group: str,
        source: str,
        names: Sequence[str],
        commit_secs: float,
    ) -> None:
        self.commit_secs = commit_secs
        self.last_commit: float | None = None
        self.parts = {
            name: _Partition(
                coordination.owner(group, source, name),
                coordination.offsets(group, source, name),
            )
            for name in names
        }
        self.replays: list[tuple[str, int]] = []

    # --- ownership ---

    def poll(self, now: float) -> Changes:
        """Carry out what ownership asks (claims, watches, loading or dropping positions),
        then commit if `commit_secs` passed since the last commit."""
        opened: dict[str, int] = {}
        closed: list[str] = []
        for name, part in self.parts.items():
            for instruction in part.owner.poll():
                self._apply(name, part, instruction, opened, closed)
        if self.last_commit is None or now - self.last_commit >= self.commit_secs:
            self.commit()
            self.last_commit = now
        return Changes(opened, tuple(closed))

    def _apply(
        self,
        name: str,
        part: _Partition,
        instruction: o.Instruction,
        opened: dict[str, int],
        closed: list[str],
    ) -> None:
        match instruction:
            case o.StartReading():
                position = part.store.load()
                part.stored_offset, part.stored_cuts = position.offset, position.cuts
                part.tracker = OffsetTracker.starting_at(position)
                opened[name] = position.offset
            case o.DropPosition():
                part.tracker, part.records = None, {}
                self.replays = [r for r in self.replays if r[0] != name]
                opened.pop(name, None)
                closed.append(name)
            case o.ResumeReading() | o.StopReading():
                pass  # `may_read` follows the state at once; the position stays
            case _:
                raise TypeError(f"unknown reading instruction {instruction!r}")

    def may_read(self, name: str) -> bool:
        """Whether `name` may be read now (replays included): asked before every read, so a
        suspended session stops reading between two polls."""
        part = self.parts[name]
        return part.tracker is not None and part.owner.may_read()

    def readable(self) -> list[str]:
        return [name for name in self.parts if self.may_read(name)]

    def state(self, name: str) -> o.Ownership:
        return self.parts[name].owner.state

    # --- batches ---

    def next_offset(self, name: str) -> int:
        return self._tracker(name).next_offset

    def batch_end(self, name: str, most: int) -> int:
        return self._tracker(name).batch_end(most)

    def emitted(self, name: str, end: int, records: Any, cut: bool) -> int | None:
        """Record the batch [next_offset, end) of `name`, to be emitted with msg_id (name,
        first); returns first, or None when it must not be emitted (the position was fenced:
        the partition is no longer ours). A cut is stored before this returns."""
        part = self.parts[name]
        tracker = self._tracker(name)
        first = tracker.next_offset
        if tracker.emitted(end, cut) and not self._store(part):
            return None
        part.records[first] = records
        return first

    def acked(self, name: str, first: int) -> None:
        part = self.parts.get(name)
        if part is not None and part.tracker is not None and part.tracker.ack(first):
            part.records.pop(first, None)

    def failed(self, name: str, first: int) -> None:
        part = self.parts.get(name)
        if part is not None and part.tracker is not None and part.tracker.fail(first):
            self.replays.append((name, first))

    def next_replay(self) -> Replay | None:
        """The oldest failed batch of a partition that may be read now."""
        for i, (name, first) in enumerate(self.replays):
            if self.may_read(name):
                del self.replays[i]
                return Replay(name, first, self.parts[name].records[first])
        return None

    # --- committing ---

    def commit(self) -> None:
        """Store each owned partition's acked offset (and its remaining cuts) if it moved."""
        for part in self.parts.values():
            if (
                part.tracker is not None
                and part.owner.may_read()
                and part.tracker.committed != part.stored_offset
            ):
                self._store(part)

    def _store(self, part: _Partition) -> bool:
        """Write what of the tracker's position differs from what is stored (the offset
        first: cuts behind it are ignored on load). False if it could not (fenced, or the
        connection is down): ownership is told, and reading restarts from what is stored."""
        assert part.tracker is not None
        position = part.tracker.position()
        try:
            if position.offset != part.stored_offset:
                part.store.save_offset(position.offset)
                part.stored_offset = position.offset
            if position.cuts != part.stored_cuts:
                part.store.save_cuts(position.cuts)
                part.stored_cuts = position.cuts
        except PositionNotStored:
            part.owner.handle(o.Fenced())
            return False
        return True

    def close(self) -> None:
        """Commit, then give every partition back."""
        self.commit()
        for part in self.parts.values():
            part.owner.release()

    def _tracker(self, name: str) -> OffsetTracker:
        tracker = self.parts[name].tracker
        if tracker is None:
            raise RuntimeError(f"partition {name} is not being read")
        return tracker
