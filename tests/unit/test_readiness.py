"""Spouts wait until every task of the topology is ready (worker/readiness.py)."""

from squall.records import WorkerBeat
from squall.worker.readiness import (
    READS_PER_SEC,
    READY_POLL_SECS,
    ready_tasks,
    round_wait,
    summary,
    waiting_for,
)


def beat(**tasks: bool) -> WorkerBeat:
    return WorkerBeat(
        seq=1,
        time_secs=0,
        uptime_secs=0,
        tasks={int(t[1:]): {"ready": ready} for t, ready in tasks.items()},
    )


SLOTS = {1: "s1-6700", 2: "s1-6700", 3: "s2-6700", 4: "s2-6700"}


def test_a_task_without_a_ready_beat_is_waited_for():
    beats = {"s1-6700": beat(t1=True, t2=False), "s2-6700": beat(t3=True)}
    assert ready_tasks(beats, SLOTS) == {1, 3}
    assert waiting_for([1, 2, 3, 4], ready_tasks(beats, SLOTS)) == [2, 4]  # 4 has not beaten


def test_nothing_waits_once_every_task_is_ready():
    beats = {"s1-6700": beat(t1=True, t2=True), "s2-6700": beat(t3=True)}
    assert waiting_for([1, 2, 3], ready_tasks(beats, SLOTS)) == []


def test_a_ready_beat_from_a_slot_the_task_has_left_does_not_count():
    """Heartbeat nodes stay until the topology goes: the dead worker's last beat said its
    SparkBolt was ready while the bolt's new worker was still starting its session."""
    beats = {"dead-6700": beat(t3=True), "s2-6700": beat(t3=False), "s1-6700": beat(t1=True)}
    assert ready_tasks(beats, SLOTS) == {1}


def test_the_summary_names_the_components_still_starting():
    assert summary([2, 4, 5], {2: "count", 4: "count", 5: "sink"}) == "3 tasks of count, sink"


def test_a_waiting_worker_looks_often_and_less_often_the_larger_the_topology():
    assert round_wait(True, 3, 1.0) == 1.0  # ready: one round a heartbeat period
    assert round_wait(False, 3, 1.0) == READY_POLL_SECS
    assert round_wait(False, 25, 1.0) == 25 / READS_PER_SEC  # each round reads 25 beats
    assert round_wait(False, 500, 1.0) == 1.0  # never rarer than the heartbeat
    assert round_wait(False, 3, 0.05) == 0.05  # nor than a heartbeat period set shorter
