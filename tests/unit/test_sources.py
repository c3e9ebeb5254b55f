"""Partition ranges follow the seed's consumer rebalancing: sorted, contiguous, even; and
PartitionedFileSpout runs in one process on the in-memory coordination, without ZooKeeper."""

import time

import pytest
from hypothesis import given
from hypothesis import strategies as st

from squall.components import TaskContext
from squall.recipes.in_memory import InMemoryCoordination, InMemoryRegistry
from squall.sources import PartitionedFileSpout, partition_range


def test_seed_style_ranges():
    parts = [f"p{i}" for i in range(5)]
    assert [partition_range(parts, i, 2) for i in range(2)] == [
        ["p0", "p1", "p2"],
        ["p3", "p4"],
    ]
    assert partition_range(parts, 3, 8) == ["p3"] and partition_range(parts, 6, 8) == []


@given(st.integers(0, 40), st.integers(1, 12))
def test_every_partition_has_exactly_one_task(n, tasks):
    parts = [f"p{i:02d}" for i in range(n)]
    dealt = [p for i in range(tasks) for p in partition_range(parts, i, tasks)]
    assert dealt == parts
    sizes = [len(partition_range(parts, i, tasks)) for i in range(tasks)]
    assert max(sizes) - min(sizes) <= 1


class Recorder:
    def __init__(self) -> None:
        self.batches: list[tuple[object, list[int], list[str]]] = []

    def emit(self, values, stream, direct_task, msg_id):
        raise AssertionError("PartitionedFileSpout emits batches only")

    def emit_batch(self, columns, stream, direct_task, msg_id):
        self.batches.append((msg_id, columns["offset"].to_pylist(), columns["line"].to_pylist()))


def spout(path, coordination, task=1, tasks=(1,), **kwargs):
    s = PartitionedFileSpout(str(path), "g", commit_secs=0, **kwargs)
    s.collector = recorder = Recorder()
    s.initialize({}, TaskContext("t", "lines", task, tasks, "/tmp", coordination))
    return s, recorder


def drain(s, most=100):
    """Call next_tuple until it emits nothing (no waiting: ownership is in memory)."""
    for _ in range(most):
        if not s.next_tuple():
            return
    raise AssertionError("the spout kept emitting")


def emit_within(s, seconds):
    end = time.monotonic() + seconds
    while not s.next_tuple():
        assert time.monotonic() < end, "nothing emitted"
        time.sleep(0.005)


def lines(path, n, start=0):
    path.write_text("".join(f"line {i}\n" for i in range(start, start + n)))


def test_runs_without_zookeeper_commits_behind_acks_and_replays_whole(tmp_path):
    lines(tmp_path / "p0", 25)
    registry = InMemoryRegistry()
    s, rec = spout(tmp_path, InMemoryCoordination(registry), batch_lines=10)
    drain(s)
    assert [m for m, _, _ in rec.batches] == [("p0", 0), ("p0", 10), ("p0", 20)]
    assert rec.batches[2][1] == [20, 21, 22, 23, 24] and rec.batches[1][2][0] == "line 10"
    s.ack(("p0", 10))
    s.fail(("p0", 0))
    s.next_tuple()
    assert rec.batches[-1] == rec.batches[0]  # the same lines at the same offsets
    assert ("g", "files", "p0") not in registry.offsets  # nothing contiguous acked yet
    s.ack(("p0", 0))
    s.next_tuple()
    assert registry.offsets[("g", "files", "p0")][0] == 20
    s.cleanup()
    s2, rec2 = spout(tmp_path, InMemoryCoordination(registry), batch_lines=10)
    drain(s2)
    assert [m for m, _, _ in rec2.batches] == [("p0", 20)]  # resumes; the unacked batch again


def test_contiguous_ranges_per_task(tmp_path):
    for i in range(3):
        lines(tmp_path / f"p{i}", 1)
    registry = InMemoryRegistry()
    read = []
    for task in (1, 2):
        s, rec = spout(tmp_path, InMemoryCoordination(registry), task, (1, 2))
        drain(s)
        read.append(sorted(m[0] for m, _, _ in rec.batches))
    assert read == [["p0", "p1"], ["p2"]]


def test_no_line_is_read_while_suspended_and_a_lost_session_rereads_the_commit(tmp_path):
    lines(tmp_path / "p0", 40)
    registry = InMemoryRegistry()
    session = InMemoryCoordination(registry)
    first, rec1 = spout(tmp_path, session, batch_lines=10)
    second, rec2 = spout(tmp_path, InMemoryCoordination(registry), batch_lines=10)
    assert first.next_tuple() and not second.next_tuple()
    first.ack(("p0", 0))
    first.next_tuple()  # commits 10, emits [10, 20)
    session.suspend()
    assert not first.next_tuple() and len(rec1.batches) == 2
    first.fail(("p0", 10))
    assert not first.next_tuple()  # not even a replay
    session.reconnect()
    assert first.next_tuple() and first.next_tuple()  # the replay, then on where it stopped
    assert [m for m, _, _ in rec1.batches] == [("p0", 0), ("p0", 10), ("p0", 10), ("p0", 20)]
    session.suspend()
    session.expire()
    drain(second)  # took over at the committed offset
    assert [m for m, _, _ in rec2.batches] == [("p0", 10), ("p0", 20), ("p0", 30)]
    session.reconnect()
    assert not first.next_tuple()  # waits for the second, which owns p0 now
    for msg_id, _, _ in rec2.batches:
        second.ack(msg_id)
    second.cleanup()
    drain(first)
    assert len(rec1.batches) == 4  # everything committed by the second: nothing to read
    first.cleanup()


def test_follow_stores_a_cut_before_emitting_the_short_batch(tmp_path):
    log = tmp_path / "p0"
    lines(log, 3)
    registry = InMemoryRegistry()
    s, rec = spout(tmp_path, InMemoryCoordination(registry), batch_lines=10, follow=True)
    drain(s)
    assert registry.cuts[("g", "files", "p0")][0] == (3,)
    with log.open("a") as f:
        f.write("".join(f"line {i}\n" for i in range(3, 15)))
    emit_within(s, 5)  # follow mode looks again 20 ms after reaching the end
    emit_within(s, 5)
    assert [m for m, _, _ in rec.batches] == [("p0", 0), ("p0", 3), ("p0", 13)]
    s2, rec2 = spout(tmp_path, InMemoryCoordination(registry), batch_lines=10, follow=True)
    s.cleanup()
    drain(s2)
    assert [(m, o) for m, o, _ in rec2.batches][:2] == [(m, o) for m, o, _ in rec.batches][:2]


def test_needs_coordination(tmp_path):
    with pytest.raises(RuntimeError, match="coordination"):
        PartitionedFileSpout(str(tmp_path), "g").initialize(
            {}, TaskContext("t", "lines", 1, (1,), "/tmp")
        )
