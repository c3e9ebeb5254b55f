"""When spouts may start emitting: once every task of the topology says it is ready.

A tuple's message timeout runs from its emit. Spouts that emitted as soon as their worker
started sent tuples to bolts that were still starting: a SparkBolt is ready only once its
SparkSession is up, 10-40 s on a loaded host. Every tuple then timed out and was replayed
while its first copy still waited in the bolt's queue, and the word count counted everything
twice. Storm's JVM bolts prepare in milliseconds; squall's Spark ones do not, so squall's
spouts wait for the whole topology (every task's heartbeat says `ready`) once, when their
worker starts.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any

from squall.records import WorkerBeat


def ready_tasks(beats: Iterable[WorkerBeat]) -> set[int]:
    """The tasks whose latest heartbeat says they are ready."""
    return {task for beat in beats for task, stats in beat.tasks.items() if stats.get("ready")}


def waiting_for(tasks: Iterable[int], ready: set[int]) -> list[int]:
    """The topology's tasks that are not ready yet (none: spouts may emit)."""
    return sorted(set(tasks) - ready)


def summary(waiting: list[int], components: Mapping[int, Any]) -> str:
    """What a worker logs while its spouts wait: the components still starting."""
    names = sorted({str(components.get(task, task)) for task in waiting})
    return f"{len(waiting)} tasks of {', '.join(names)}"
