"""Reading many nodes at once against a real ZooKeeper (squall.zk.connection.read_named through
squall.zk.multiread's multiRead): every node, in chunks, under a chroot too; a missing node
is left out, a corrupt one skipped, and a node the client may not read is an error."""

from __future__ import annotations

import pytest
from kazoo.client import KazooClient
from kazoo.exceptions import NoAuthError
from kazoo.security import make_digest_acl

from squall.records import WorkerBeat, encode
from squall.zk import multiread as zk_multiread
from squall.zk.connection import read_named, read_records, read_task_components


@pytest.fixture
def zk(zk_server):
    client = KazooClient(hosts=zk_server.hosts)
    try:
        client.start()
        yield client
    finally:
        client.stop()
        client.close()


def beat(seq: int) -> bytes:
    return encode(WorkerBeat(seq, 0, 0, {seq: {"executed": seq}}))


def test_every_node_in_chunks_a_missing_one_left_out_a_corrupt_one_skipped(zk):
    count = zk_multiread.CHUNK * 2 + 7  # three requests
    for i in range(count):
        zk.create(f"/many/n{i:04d}", beat(i), makepath=True)
    zk.create("/many/junk", b"not json")
    names = [f"n{i:04d}" for i in range(count)] + ["junk", "gone"]
    read = read_named(zk, WorkerBeat, "/many", names)
    assert sorted(read) == sorted(names[:count])
    assert all(read[f"n{i:04d}"].seq == i for i in range(count))
    assert read_records(zk, WorkerBeat, "/many") == read


def test_under_a_chroot(zk_server, zk):
    zk.create("/rooted/beats/a", beat(7), makepath=True)
    rooted = KazooClient(hosts=f"{zk_server.hosts}/rooted")
    try:
        rooted.start()
        assert read_named(rooted, WorkerBeat, "/beats", ["a"])["a"].seq == 7
    finally:
        rooted.stop()
        rooted.close()


def test_a_node_the_client_may_not_read_is_an_error_not_a_gap(zk):
    zk.create("/secret/x", beat(1), makepath=True)
    zk.set_acls("/secret/x", [make_digest_acl("u", "p", all=True)])
    zk.create("/secret/y", beat(2))
    with pytest.raises(NoAuthError):
        read_named(zk, WorkerBeat, "/secret", ["x", "y"])


def test_every_topologys_tasks_at_once_a_malformed_node_skipped(zk):
    zk.create("/tasks/t-1/1", b"a", makepath=True)
    zk.create("/tasks/t-1/2", b"b")
    zk.create("/tasks/t-1/x", b"a")  # not a task number
    zk.create("/tasks/t-1/3")  # no name
    zk.create("/tasks/t-1/4", b"\xff")  # not text
    zk.create("/tasks/t-2/1", b"c", makepath=True)
    read = read_task_components(zk, ["/tasks/t-1", "/tasks/gone", "/tasks/t-2"])
    assert read == [{1: "a", 2: "b"}, {}, {1: "c"}]
    zk.set_acls("/tasks/t-2/1", [make_digest_acl("u", "p", all=True)])
    with pytest.raises(NoAuthError):
        read_task_components(zk, ["/tasks/t-1", "/tasks/t-2"])
