"""What `squall.testing.run` answers: the RunResult of a run, or why there is none
(RunTimeout, RunFailed). Plain data, apart from the worker modules that fill it in
(worker/in_process.py), so the public API can name it without importing them."""

from __future__ import annotations

from collections import defaultdict
from dataclasses import dataclass, field
from typing import Any

from squall.components import DEFAULT_STREAM


class RunTimeout(TimeoutError):
    """The topology was still working when `run`'s timeout passed."""


class RunFailed(RuntimeError):
    """A task could not start (its initialize raised, or its SparkSession failed)."""


@dataclass
class RunResult:
    """What each component emitted, per stream, and what became of the spouts' tuples."""

    emitted: dict[tuple[str, str], list[tuple[Any, ...]]] = field(
        default_factory=lambda: defaultdict(list)
    )
    acked: dict[str, list[Any]] = field(default_factory=lambda: defaultdict(list))
    failed: dict[str, list[Any]] = field(default_factory=lambda: defaultdict(list))
    errors: dict[str, list[str]] = field(default_factory=lambda: defaultdict(list))
    # the components whose tasks tracked the tuple trees: the spouts themselves, or __acker
    tree_trackers: list[str] = field(default_factory=list)

    def values(self, component: str, stream: str = DEFAULT_STREAM) -> list[tuple[Any, ...]]:
        """Every tuple `component` emitted on `stream`, batches as their rows."""
        return list(self.emitted.get((component, stream), []))
