"""Spouts wait until every task of the topology is ready (worker/readiness.py)."""

from squall.records import WorkerBeat
from squall.worker.readiness import ready_tasks, summary, waiting_for


def beat(**tasks: bool) -> WorkerBeat:
    return WorkerBeat(
        seq=1,
        time_secs=0,
        uptime_secs=0,
        tasks={int(t[1:]): {"ready": ready} for t, ready in tasks.items()},
    )


def test_a_task_without_a_ready_beat_is_waited_for():
    beats = [beat(t1=True, t2=False), beat(t3=True)]
    assert ready_tasks(beats) == {1, 3}
    assert waiting_for([1, 2, 3, 4], ready_tasks(beats)) == [2, 4]  # 4 has not beaten yet


def test_nothing_waits_once_every_task_is_ready():
    beats = [beat(t1=True, t2=True), beat(t3=True)]
    assert waiting_for([1, 2, 3], ready_tasks(beats)) == []


def test_the_summary_names_the_components_still_starting():
    assert summary([2, 4, 5], {2: "count", 4: "count", 5: "sink"}) == "3 tasks of count, sink"
