"""A worker's heartbeat stays within one ZooKeeper request whatever its number of tasks."""

from squall.records import WorkerBeat, decode, encode
from squall.worker.beat_fit import BEAT_BUDGET, fitted


def entry(task: int) -> dict:
    streams = {f"stream-{i}": 10 * task for i in range(4)}  # a bolt with four output streams
    window = {"emitted": streams, "transferred": streams, "acked": streams, "execute_ms": 0.5}
    return {
        "emitted": {"default": 10 * task, "__ack_ack": task},
        "acked": {"default": task},
        "ready": True,
        "idle": 0.25,
        "secs": 12.5,
        "complete_ms": {"count": 3, "avg": 1.0, "p50": 1.0, "p99": 2.0},
        "windows": {key: dict(window) for key in ("600", "10800", "86400")},
        "filler": "x" * 300,
    }


def beat_bytes(entries) -> bytes:
    return encode(WorkerBeat(7, 1_700_000_000, 30, dict(entries)))


def test_a_small_beat_goes_whole():
    tasks = {t: entry(t) for t in range(20)}
    data, cut = fitted(tasks, beat_bytes)
    assert cut is None
    assert decode(WorkerBeat, data, "beat").tasks == tasks


def test_a_big_beat_leaves_out_the_windows_first():
    tasks = {t: entry(t) for t in range(1000)}
    assert len(beat_bytes(tasks)) > BEAT_BUDGET  # the case the budget exists for
    data, cut = fitted(tasks, beat_bytes)
    assert cut == "the windowed figures"
    assert len(data) <= BEAT_BUDGET
    beat = decode(WorkerBeat, data, "beat")
    assert sorted(beat.tasks) == list(range(1000))
    assert "windows" not in beat.tasks[5]
    assert beat.tasks[5]["acked"] == {"default": 5}


def test_a_huge_beat_keeps_each_tasks_scalars():
    tasks = {t: entry(t) | {"filler": "x" * 2000} for t in range(1000)}
    data, cut = fitted(tasks, beat_bytes, budget=200_000)
    assert cut == "every figure but the counts"
    beat = decode(WorkerBeat, data, "beat")
    assert beat.tasks[3] == {"ready": True, "idle": 0.25, "secs": 12.5, "filler": "x" * 2000}
