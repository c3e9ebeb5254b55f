"""The heartbeat cache: which tasks are alive, judged on nimbus's own clock.

Workers write one beat per worker carrying a sequence number. Nimbus records, per task, the
last (worker, seq) it saw and the nimbus-local monotonic time at which that value *changed*.
A task is dead when that time is older than nimbus.task.timeout.secs. Worker clocks are never
compared with nimbus's (the reason Storm keeps this cache at all), and a cache that starts
empty, after a restart or failover, counts every beating task as fresh rather than dead
(Storm #8419). `now` is always passed in.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any

from squall.liveness import is_alive
from squall.records import Slot

BeatToken = tuple[str, int, int]  # (node, port, seq) of the worker beat that covered the task


@dataclass(frozen=True)
class TaskBeat:
    token: BeatToken
    changed_at: float  # nimbus monotonic seconds
    # what the beat said of the task: initialized (a SparkBolt's session up). A worker beats
    # while its tasks initialize, so a task whose initialize fails looks alive for a timeout
    # unless this is read (nimbus/reads/run_state.py)
    ready: bool = True


@dataclass(frozen=True)
class HeartbeatCache:
    beats: Mapping[int, TaskBeat] = field(default_factory=dict)

    def observe(
        self, seen: Mapping[int, BeatToken], now: float, unready: frozenset[int] = frozenset()
    ) -> HeartbeatCache:
        """Fold in the tokens read from ZooKeeper (and which of those tasks their beat says
        are not ready yet); unchanged tokens keep their old time."""
        beats = dict(self.beats)
        for task, token in seen.items():
            old = beats.get(task)
            if old is None or old.token != token:
                beats[task] = TaskBeat(token, now, task not in unready)
        return HeartbeatCache(beats)

    def forget(self, tasks: Iterable[int]) -> HeartbeatCache:
        drop = set(tasks)
        return HeartbeatCache({t: b for t, b in self.beats.items() if t not in drop})

    def dead_tasks(
        self,
        tasks: Iterable[int],
        assigned_at: Mapping[int, float],
        now: float,
        task_timeout: float,
        launch_timeout: float,
    ) -> set[int]:
        """Tasks with no fresh beat. A task (re)assigned at `assigned_at` gets
        `launch_timeout` to send its first beat after that; beats older than its assignment
        (from the slot it left) do not count (squall.liveness)."""
        dead = set()
        for task in tasks:
            beat = self.beats.get(task)
            last = beat.changed_at if beat else None
            started = assigned_at.get(task, float("-inf"))
            if not is_alive(started, last, now, task_timeout, launch_timeout):
                dead.add(task)
        return dead


def tokens_from_beats(
    beats: Mapping[Slot, Any], placement: Mapping[int, Slot]
) -> dict[int, BeatToken]:
    """{(node, port): WorkerBeat} -> {task: token}, counting a beat for a task only when it
    comes from the slot the task is assigned to (a worker that lost the task does not keep
    it alive)."""
    return {
        task: (node, port, beat.seq)
        for (node, port), beat in sorted(beats.items())
        for task in beat.tasks
        if placement.get(task) == (node, port)
    }


def unready_tasks(beats: Mapping[Slot, Any], placement: Mapping[int, Slot]) -> frozenset[int]:
    """The tasks whose beat, from the slot each is assigned to, says they are not ready
    (initialize still running, or failed); a beat without the flag (an older worker) counts
    as ready."""
    return frozenset(
        task
        for (node, port), beat in beats.items()
        for task, stats in beat.tasks.items()
        if placement.get(task) == (node, port) and stats.get("ready") is False
    )
