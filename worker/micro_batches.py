"""A SparkBolt's micro-batches: inputs are gathered until topology.batch.size rows arrived
or topology.batch.timeout.ms passed since the first one, then split by (source component,
stream), because each input stream has its own fields: one Spark job per group, in sorted
order.

Pure: arrivals and ticks in, RunSparkJob instructions out, time passed in.
"""

from __future__ import annotations

from dataclasses import dataclass

from squall.components import Batch, Tuple

from .acking import Tick

Input = Tuple | Batch


@dataclass(frozen=True)
class Arrived:
    item: Input
    now: float


@dataclass(frozen=True)
class Flush:
    """The task is stopping: run what was gathered."""


@dataclass(frozen=True)
class RunSparkJob:
    source: str
    stream: str
    items: tuple[Input, ...]

    @property
    def rows(self) -> int:
        return sum(rows(item) for item in self.items)


MicroBatchEvent = Arrived | Tick | Flush


def rows(item: Input) -> int:
    return len(item) if isinstance(item, Batch) else 1


class MicroBatcher:
    def __init__(self, size: int, timeout: float) -> None:
        self.size = size  # rows
        self.timeout = timeout  # seconds
        self.items: list[Input] = []
        self.rows = 0
        self.deadline: float | None = None  # set by the first arrival

    def wait(self, now: float, idle: float) -> float:
        """How long the shell may wait for the next input: until the deadline, or `idle`
        when nothing is gathered."""
        return idle if self.deadline is None else max(0.0, self.deadline - now)

    def handle(self, event: MicroBatchEvent) -> list[RunSparkJob]:
        match event:
            case Arrived(item, now):
                self.items.append(item)
                self.rows += rows(item)
                if self.deadline is None:
                    self.deadline = now + self.timeout
                return self._close() if self.rows >= self.size or now >= self.deadline else []
            case Tick(now):
                due = self.deadline is not None and now >= self.deadline
                return self._close() if due else []
            case Flush():
                return self._close()
        raise TypeError(f"the micro-batcher has no event {event!r}")

    def _close(self) -> list[RunSparkJob]:
        groups: dict[tuple[str, str], list[Input]] = {}
        for item in self.items:
            groups.setdefault((item.source_component, item.stream), []).append(item)
        self.items, self.rows, self.deadline = [], 0, None
        return [
            RunSparkJob(source, stream, tuple(items))
            for (source, stream), items in sorted(groups.items())
        ]
