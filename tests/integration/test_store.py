"""The durable store on SQLite and on a real PostgreSQL server: topology records, code
packages, and the coordinator log with seed 004's message model."""

import json
import threading

import pytest

from squall.nimbus.core.coordinator_log import topology_confs
from squall.nimbus.store import Store, compact

from .pgserver import PostgresServer


@pytest.fixture(scope="module")
def postgres():
    server = PostgresServer().start()
    yield server
    server.stop()


@pytest.fixture(params=["sqlite", "postgresql"])
def url(request, tmp_path):
    if request.param == "sqlite":
        return f"sqlite:///{tmp_path / 'store.db'}"
    server = request.getfixturevalue("postgres")
    # a fresh schema per test: drop what an earlier test left
    store = Store(server.url, "setup")
    from squall.nimbus.store import metadata

    metadata.drop_all(store.engine)
    store.close()
    return server.url


def test_topologies_and_code_round_trip(url):
    store = Store(url, source="nimbus-a:6627")
    code = bytes(range(256)) * 1000
    store.save_topology("wc-1-1", "wc", {"topology.workers": 2}, {"lines": {}}, code, 5.0)
    stored = store.topology("wc-1-1")
    assert (stored.name, stored.conf, stored.structure) == (
        "wc",
        {"topology.workers": 2},
        {"lines": {}},
    )
    assert store.code("wc-1-1") == code
    assert store.topology_ids() == {"wc-1-1"}
    other = Store(url, source="nimbus-b:6627")  # a standby sees the same code
    assert other.code("wc-1-1") == code
    store.remove_topology("wc-1-1")
    assert other.topology("wc-1-1") is None
    store.close()
    other.close()


def test_coordinator_log_is_ordered_compact_and_replayable(url):
    store = Store(url, source="nimbus-a:6627")
    store.append("submit", "wc", {"topology": "wc-1-1", "name": "wc", "conf": {"a": 1}})
    store.append("set-config", "topology.workers", {"topology": "wc-1-1", "value": 3})
    store.append("set-container-host-assignment", "c1", {"hostname": "h1"})
    store.append("set-config", "topology.workers", {"topology": "wc-1-1", "value": 4})
    messages = list(store.log())
    assert [m.seq for m in messages] == sorted(m.seq for m in messages)
    assert [m.type for m in messages] == [
        "submit",
        "set-config",
        "set-container-host-assignment",
        "set-config",
    ]
    m = messages[1]
    assert (m.version, m.key, m.source) == ("1", "topology.workers", "nimbus-a:6627")
    assert m.values == {"topology": "wc-1-1", "value": 3} and m.timestamp > 0
    assert topology_confs(store.log()) == {"wc-1-1": {"a": 1, "topology.workers": 4}}
    assert list(store.log(since=messages[-2].seq)) == [messages[-1]]
    # a deposed leader (epoch 1) writing after the new leader (epoch 2) is ignored
    store.append("set-config", "topology.workers", {"topology": "wc-1-1", "value": 5, "epoch": 2})
    store.append("set-config", "topology.workers", {"topology": "wc-1-1", "value": 9, "epoch": 1})
    assert topology_confs(store.log()) == {"wc-1-1": {"a": 1, "topology.workers": 5}}
    with pytest.raises(ValueError, match="unknown coordinator message type"):
        store.append("set-everything", "k", {})
    store.close()


def test_messages_are_compact_json():
    assert compact({"b": [1, 2], "a": {"x": "y"}}) == '{"a":{"x":"y"},"b":[1,2]}'
    assert " " not in compact(json.loads('{"values": {"k": [1, 2, 3]}}'))


def test_concurrent_writers_keep_every_message(url):
    stores = [Store(url, source=f"n{i}") for i in range(4)]

    def write(store):
        for i in range(25):
            store.append("assignment", "t", {"i": i})

    threads = [threading.Thread(target=write, args=(s,)) for s in stores]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert len([m for m in stores[0].log() if m.type == "assignment"]) == 100
    for s in stores:
        s.close()
