"""Which offset of a partition may be committed: the acks of its batches, tracked.

A source emits a partition in batches, each covering offsets [first, end); batches are
acked or failed in any order. The committed offset is the end of the longest run of acked
batches from the last committed offset: a successor resumes there and replays at most what
was in flight, never skipping a line that was not processed.

A batch shorter than the source's batch size (the end of a file that is still growing) is
a *cut*. Cuts past the committed offset are stored before the batch is emitted, so a
successor replaying from the committed offset cuts its batches at the same lines: a batch is
then the same lines whoever reads it, and a sink can key its output by batch.

Pure: no I/O, no clock. `SourcePartitions` (squall/source_partitions.py) stores positions.
"""

from __future__ import annotations

from dataclasses import dataclass, field


@dataclass(frozen=True)
class Position:
    """What is stored for a partition: the first offset not yet fully processed, and the
    early batch ends past it."""

    offset: int = 0
    cuts: tuple[int, ...] = ()

    def __post_init__(self) -> None:
        object.__setattr__(self, "cuts", tuple(sorted(c for c in self.cuts if c > self.offset)))


@dataclass
class OffsetTracker:
    """The batches of one partition in flight since `committed` was loaded."""

    committed: int
    cuts: list[int] = field(default_factory=list)
    next_offset: int = -1  # where the next new batch starts
    in_flight: dict[int, int] = field(default_factory=dict)  # first -> end, not yet acked
    acked: dict[int, int] = field(default_factory=dict)  # first -> end, acked past a gap

    @classmethod
    def starting_at(cls, position: Position) -> OffsetTracker:
        return cls(position.offset, list(position.cuts), position.offset)

    def batch_end(self, most: int) -> int:
        """Where the next batch ends: `most` offsets on, or earlier at a stored cut."""
        end = self.next_offset + most
        return min([c for c in self.cuts if c > self.next_offset] + [end])

    def emitted(self, end: int, cut: bool) -> bool:
        """A new batch [next_offset, end) goes out; `cut`: it ended early. Returns whether
        the cuts changed (they must be stored before the batch is emitted)."""
        if end <= self.next_offset:
            raise ValueError(f"an empty batch at {self.next_offset}")
        self.in_flight[self.next_offset] = end
        self.next_offset = end
        if cut and end not in self.cuts:
            self.cuts.append(end)
            return True
        return False

    def ack(self, first: int) -> bool:
        """The batch at `first` was processed; False if it was not in flight (acked before,
        or emitted before the position was last loaded)."""
        end = self.in_flight.pop(first, None)
        if end is None:
            return False
        self.acked[first] = end
        while self.committed in self.acked:
            self.committed = self.acked.pop(self.committed)
        return True

    def fail(self, first: int) -> bool:
        """The batch at `first` failed; True if it is in flight and must be replayed whole."""
        return first in self.in_flight

    def position(self) -> Position:
        return Position(self.committed, tuple(self.cuts))
