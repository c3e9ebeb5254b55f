"""/errors/[topology]/[component] nodes against a real ZooKeeper (squall.error_nodes):
appends keep the latest entries, and a writer that must not recreate a removed topology's
subtree (a worker reporting as it stops) writes nothing once the parent is gone."""

from __future__ import annotations

import json

import pytest
from kazoo.client import KazooClient

from squall import error_nodes


@pytest.fixture
def zk(zk_server):
    client = KazooClient(hosts=zk_server.hosts)
    try:
        client.start()
        yield client
    finally:
        client.stop()
        client.close()


def test_appends_keep_the_latest_entries(zk):
    path = "/errs1/t/split"
    for i in range(error_nodes.MAX_KEPT + 3):
        assert error_nodes.append(zk, path, error_nodes.entry(f"e{i}", "h", 6700, now=i))
    entries = json.loads(zk.get(path)[0])
    assert [e["error"] for e in entries] == [f"e{i}" for i in range(3, error_nodes.MAX_KEPT + 3)]


def test_without_make_parents_a_removed_topology_gets_no_orphan(zk):
    path = "/errs2/t/split"
    entry = error_nodes.entry("late", "h", 6700)
    assert not error_nodes.append(zk, path, entry, make_parents=False)
    assert zk.exists("/errs2/t") is None  # nothing made
    zk.ensure_path("/errs2/t")  # the topology's errors exist: the node is made as before
    assert error_nodes.append(zk, path, entry, make_parents=False)
    assert json.loads(zk.get(path)[0])[0]["error"] == "late"


def test_the_first_report_of_a_topology_makes_its_parent_only_while_the_topology_is_there(zk):
    zk.ensure_path("/errs3/errors")
    path = "/errs3/errors/t/split"
    entry = error_nodes.entry("first", "h", 6700)
    assert not error_nodes.create_while(zk, "/errs3/storms/t", path, entry)  # killed
    assert zk.exists("/errs3/errors/t") is None
    zk.ensure_path("/errs3/storms/t")
    assert error_nodes.create_while(zk, "/errs3/storms/t", path, entry)
    assert json.loads(zk.get(path)[0])[0]["error"] == "first"
    assert not error_nodes.create_while(zk, "/errs3/storms/t", path, entry)  # made already
