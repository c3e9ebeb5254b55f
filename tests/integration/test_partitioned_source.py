"""PartitionedFileSpout against a real ZooKeeper, driven in-process with a recording
collector: batches, offsets committed only behind acks, replays with the same offsets,
ownership handed over (also when an owner is cut off from ZooKeeper and its session
expires), and follow mode on growing files."""

from __future__ import annotations

import json
import time

import pytest
from kazoo.client import KazooClient, KazooState
from kazoo.retry import KazooRetry

from squall.components import TaskContext
from squall.coordination import ZkCoordination
from squall.recipes.ownership import Ownership
from squall.sources import PartitionedFileSpout
from squall.zk.layout import ZkLayout
from squall.zk.server import ZooKeeperServer

from .tcp_proxy import TcpProxy


@pytest.fixture(scope="module")
def zk(zk_server):
    client = KazooClient(hosts=zk_server.hosts)
    try:
        client.start()
        yield client
    finally:
        client.stop()
        client.close()


class Recorder:
    def __init__(self) -> None:
        self.batches: list[tuple[object, dict]] = []
        self.times: list[float] = []  # when each batch was emitted

    def emit(self, values, stream, direct_task, msg_id):
        raise AssertionError("PartitionedFileSpout emits batches only")

    def emit_batch(self, columns, stream, direct_task, msg_id):
        self.batches.append((msg_id, {k: list(v.to_pylist()) for k, v in columns.items()}))
        self.times.append(time.monotonic())


def spout(zk, path, group, task=1, tasks=(1,), **kwargs) -> tuple[PartitionedFileSpout, Recorder]:
    s = PartitionedFileSpout(str(path), group, commit_secs=0, **kwargs)
    s.collector = recorder = Recorder()
    coordination = ZkCoordination(zk, ZkLayout("/it"), task)
    s.initialize({}, TaskContext("t", "lines", task, tasks, "/tmp", coordination))
    return s, recorder


def drain(s: PartitionedFileSpout, deadline: float = 10) -> None:
    """Call next_tuple until it has nothing more to emit (a claim follows a watch event)."""
    end = time.monotonic() + deadline
    quiet = 0
    while quiet < 20:
        assert time.monotonic() < end, "the spout kept emitting"
        quiet = 0 if s.next_tuple() else quiet + 1
        time.sleep(0.05)


def committed(zk, group, name) -> int:
    return int(zk.get(ZkLayout("/it").consumer_offset(group, "files", name))[0])


def test_batches_commit_only_behind_acks_and_replay_whole(zk, tmp_path):
    (tmp_path / "p0").write_text("".join(f"line {i}\n" for i in range(25)))
    s, rec = spout(zk, tmp_path, "g1", batch_lines=10)
    drain(s)
    assert [m for m, _ in rec.batches] == [("p0", 0), ("p0", 10), ("p0", 20)]
    assert rec.batches[2][1]["offset"] == [20, 21, 22, 23, 24]
    assert rec.batches[1][1]["line"][0] == "line 10"
    s.ack(("p0", 10))  # out of order: nothing before it is done, so nothing commits
    s.next_tuple()
    assert not zk.exists(ZkLayout("/it").consumer_offset("g1", "files", "p0"))
    s.fail(("p0", 0))
    s.next_tuple()
    assert rec.batches[-1] == (("p0", 0), rec.batches[0][1])  # the same lines, same offsets
    s.ack(("p0", 0))
    s.ack(("p0", 0))  # a second verdict for the same batch changes nothing
    s.next_tuple()
    assert committed(zk, "g1", "p0") == 20
    s.cleanup()
    assert committed(zk, "g1", "p0") == 20

    # the next owner resumes at the committed offset; the unacked batch is read again
    s2, rec2 = spout(zk, tmp_path, "g1", batch_lines=10)
    drain(s2)
    assert [m for m, _ in rec2.batches] == [("p0", 20)]
    s2.cleanup()


def test_a_partition_waits_for_its_previous_owner(zk, tmp_path):
    (tmp_path / "p0").write_text("a\nb\n")
    first, rec1 = spout(zk, tmp_path, "g2")
    drain(first)
    second, rec2 = spout(zk, tmp_path, "g2")
    drain(second, deadline=5)
    assert len(rec1.batches) == 1 and rec2.batches == []  # p0 still owned by the first
    first.ack(rec1.batches[0][0])
    first.next_tuple()
    first.cleanup()
    drain(second)
    assert rec2.batches == []  # everything was committed: nothing to replay
    second.cleanup()


def test_follow_reads_appended_lines_and_waits_for_the_newline(zk, tmp_path):
    log = tmp_path / "p0"
    log.write_text("one\ntwo\nthr")
    s, rec = spout(zk, tmp_path, "g3", follow=True)
    drain(s)
    assert [c["line"] for _, c in rec.batches] == [["one", "two"]]
    with log.open("a") as f:
        f.write("ee\nfour\n")
    drain(s)
    assert [c["line"] for _, c in rec.batches][1:] == [["three", "four"]]
    assert rec.batches[1][1]["offset"] == [2, 3]
    s.cleanup()


def test_a_batch_cut_short_by_a_growing_file_is_cut_the_same_after_a_crash(zk, tmp_path):
    """The successor of a spout that died with nothing committed replays the same batches,
    so a sink keyed by batch does not count the lines of two overlapping ones."""
    log = tmp_path / "p0"
    log.write_text("".join(f"{i}\n" for i in range(5)))
    s, rec = spout(zk, tmp_path, "g4", follow=True, batch_lines=10)
    drain(s)
    with log.open("a") as f:
        f.write("".join(f"{i}\n" for i in range(5, 30)))
    drain(s)
    first_run = [(m, c["line"]) for m, c in rec.batches]
    assert [m for m, _ in first_run] == [("p0", 0), ("p0", 5), ("p0", 15), ("p0", 25)]
    # SIGKILL: no cleanup, no commit; the owner node goes with the session
    zk.delete(ZkLayout("/it").consumer_owner("g4", "files", "p0"))
    s2, rec2 = spout(zk, tmp_path, "g4", follow=True, batch_lines=10)
    drain(s2)
    assert [(m, c["line"]) for m, c in rec2.batches] == first_run
    # once committed past them, the stored cuts are dropped
    for msg_id, _ in rec2.batches[:2]:
        s2.ack(msg_id)
    s2.next_tuple()
    assert committed(zk, "g4", "p0") == 15
    cuts = zk.get(ZkLayout("/it").consumer_cuts("g4", "files", "p0"))[0]
    assert json.loads(cuts) == [30]  # 5 was passed; 15 and 25 ended full batches
    s2.cleanup()


def wait_for(condition, what: str, deadline: float = 20, step=None) -> None:
    end = time.monotonic() + deadline
    while not condition():
        assert time.monotonic() < end, f"timed out waiting for {what}"
        if step is not None:
            step()
        time.sleep(0.01)


def expire_session(server: ZooKeeperServer, client_id: tuple[int, bytes]) -> None:
    """What the server does once a silent session times out, at once: attach the session from
    another client and close it; its ephemeral nodes go, their watches fire."""
    other = KazooClient(hosts=server.hosts, client_id=client_id)
    other.start()
    other.stop()
    other.close()


def test_an_owner_cut_off_stops_reading_before_its_session_expires_and_another_takes_over(
    zk_server, zk, tmp_path
):
    """The bug this recipe fixes: an owner that lost its connection kept reading, and once its
    session expired another task took the partition, so two tasks read it at once."""
    (tmp_path / "p0").write_text("".join(f"{i}\n" for i in range(10_000)))
    proxy = TcpProxy(zk_server.port)
    cut_off = KazooClient(
        hosts=proxy.hosts, timeout=10, connection_retry=KazooRetry(max_tries=-1, max_delay=0.2)
    )
    cut_off.start()
    try:
        first, rec1 = spout(cut_off, tmp_path, "g5", batch_lines=10)
        second, rec2 = spout(zk, tmp_path, "g5", batch_lines=10)
        for _ in range(3):
            assert first.next_tuple()
        first.ack(("p0", 0))
        first.next_tuple()  # commits 10 (commit_secs=0)
        assert not second.next_tuple() and committed(zk, "g5", "p0") == 10
        heard: list[str] = []
        cut_off.add_listener(heard.append)

        session = cut_off.client_id  # kazoo tells it only while connected
        proxy.cut()
        wait_for(lambda: cut_off.state == KazooState.SUSPENDED, "the client to notice")
        assert first.partitions.state("p0") is Ownership.SUSPENDED
        assert not first.next_tuple()  # reads nothing once suspended
        first.fail(("p0", 10))
        assert not first.next_tuple()  # not even a replay
        expire_session(zk_server, session)
        wait_for(lambda: rec2.batches, "the second task to take over", step=second.next_tuple)
        assert rec2.batches[0][0] == ("p0", 10)  # from the committed offset
        assert max(rec1.times) < min(rec2.times)

        proxy.restore()  # the first hears its session is lost and claims again: refused
        wait_for(
            lambda: first.partitions.state("p0") is Ownership.WAITING,
            "the first task to wait for the partition",
            step=first.next_tuple,
        )
        assert heard == [
            KazooState.SUSPENDED,
            KazooState.LOST,
            KazooState.CONNECTED,
        ]
        emitted_by_first = len(rec1.batches)
        for _ in range(5):
            second.next_tuple()
            assert not first.next_tuple()
        assert len(rec1.batches) == emitted_by_first == 4
        for msg_id, _ in rec2.batches:
            second.ack(msg_id)
        second.next_tuple()
        end_of_second = committed(zk, "g5", "p0")
        second.cleanup()  # its owner node goes: the first's watch fires
        wait_for(
            lambda: len(rec1.batches) > emitted_by_first,
            "the first to read again",
            step=first.next_tuple,
        )
        assert rec1.batches[emitted_by_first][0] == ("p0", end_of_second)  # reloaded
        assert max(rec2.times) < rec1.times[emitted_by_first]
        first.cleanup()
    finally:
        cut_off.stop()
        cut_off.close()
        proxy.close()


def test_an_owner_reconnected_within_its_session_reads_on_where_it_stopped(zk_server, tmp_path):
    (tmp_path / "p0").write_text("".join(f"{i}\n" for i in range(100)))
    proxy = TcpProxy(zk_server.port)
    client = KazooClient(
        hosts=proxy.hosts, timeout=10, connection_retry=KazooRetry(max_tries=-1, max_delay=0.2)
    )
    client.start()
    try:
        s, rec = spout(client, tmp_path, "g6", batch_lines=10)
        assert s.next_tuple() and s.next_tuple()
        proxy.cut()
        wait_for(lambda: s.partitions.state("p0") is Ownership.SUSPENDED, "suspension")
        assert not s.next_tuple()
        proxy.restore()
        wait_for(lambda: s.next_tuple(), "reading again")
        assert [m for m, _ in rec.batches] == [("p0", 0), ("p0", 10), ("p0", 20)]
        assert s.partitions.state("p0") is Ownership.OWNED
        listeners = set(client.state_listeners)
        s.cleanup()
        assert not client.exists(ZkLayout("/it").consumer_owner("g6", "files", "p0"))
        assert len(listeners - client.state_listeners) == 1  # its session listener is gone
    finally:
        client.stop()
        client.close()
        proxy.close()
