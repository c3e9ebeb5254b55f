"""When spouts may start emitting: once every task of the topology says it is ready.

A tuple's message timeout runs from its emit. Spouts that emitted as soon as their worker
started sent tuples to bolts that were still starting: a SparkBolt is ready only once its
SparkSession is up, 10-40 s on a loaded host. Every tuple then timed out and was replayed
while its first copy still waited in the bolt's queue, and the word count counted everything
twice. Storm's JVM bolts prepare in milliseconds; squall's Spark ones do not, so squall's
spouts wait for the whole topology (every task's heartbeat says `ready`) once, when their
worker starts.

How soon they start is how soon each worker learns: a worker writes its heartbeat when one of
its tasks becomes ready (not only every worker.heartbeat.frequency.secs) and, while its spouts
wait, reads the others' every READY_POLL_SECS. With one round a second the word count's spouts
waited about two seconds after their workers ran: a round for the first beats, another to see
the SparkBolt's. Every waiting worker reads every worker's beat, so a larger topology looks
less often: at most READS_PER_SEC reads a second per waiting worker.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any

from squall.records import WorkerBeat

READY_POLL_SECS = 0.1
READS_PER_SEC = 50


def ready_tasks(beats: Mapping[str, WorkerBeat], beat_of: Mapping[int, str]) -> set[int]:
    """The tasks that the heartbeat of the slot they are assigned to says are ready
    (`beats` by heartbeat node name, `beat_of` each task's). Heartbeat nodes stay until the
    topology goes: a task moved off a dead worker's slot still shows as ready in that slot's
    last beat, and counting it let spouts emit while the task's new worker was starting."""
    return {
        task
        for name, beat in beats.items()
        for task, stats in beat.tasks.items()
        if stats.get("ready") and beat_of.get(task) == name
    }


def waiting_for(tasks: Iterable[int], ready: set[int]) -> list[int]:
    """The topology's tasks that are not ready yet (none: spouts may emit)."""
    return sorted(set(tasks) - ready)


def round_wait(topology_ready: bool, workers: int, period: float) -> float:
    """Seconds until a worker's next heartbeat round: `period` once the topology is ready."""
    if topology_ready:
        return period
    return min(period, max(READY_POLL_SECS, workers / READS_PER_SEC))


def summary(waiting: list[int], components: Mapping[int, Any]) -> str:
    """What a worker logs while its spouts wait: the components still starting."""
    names = sorted({str(components.get(task, task)) for task in waiting})
    return f"{len(waiting)} tasks of {', '.join(names)}"
