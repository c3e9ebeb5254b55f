"""Blobs in nimbus's store on SQLite and on a real PostgreSQL server: SQL substr chunks (of
a BLOB and of a bytea), versions, and the code package read as Storm's topology blobs."""

import json

import pytest

from squall.nimbus import blob_store, store
from squall.nimbus.blob_acl import ALL, USER, Ace, BlobMeta
from squall.nimbus.blob_store import BlobExists, BlobStore, NoBlob
from squall.nimbus.code_blobs import CONF, JAR, code_blob, code_chunk

from .pgserver import PostgresServer

META = BlobMeta((Ace(USER, "alice", ALL),), replication=2)
DATA = bytes(range(256)) * 1000


@pytest.fixture(scope="module")
def postgres():
    server = PostgresServer().start()
    yield server
    server.stop()


@pytest.fixture(params=["sqlite", "postgresql"])
def nimbus_store(request, tmp_path):
    if request.param == "sqlite":
        url = f"sqlite:///{tmp_path / 'store.db'}"
    else:
        url = request.getfixturevalue("postgres").url
    s = store.Store(url, "test")
    blob_store.metadata.drop_all(s.engine)  # a fresh schema per test
    store.metadata.drop_all(s.engine)
    store.metadata.create_all(s.engine)
    yield s
    s.close()


def test_blobs_round_trip_in_chunks_and_versions_grow(nimbus_store):
    blobs = BlobStore(nimbus_store.engine)
    version = blobs.create("k", META, DATA, now_ms=1000)
    with pytest.raises(BlobExists):
        blobs.create("k", META, b"", now_ms=2000)
    stored = blobs.get("k")
    assert (stored.version, stored.meta, stored.size) == (1000, META, len(DATA))
    chunks = [blobs.chunk("k", version, offset, 70_000) for offset in range(0, 350_000, 70_000)]
    assert b"".join(chunks) == DATA and chunks[-1] == b""
    newer = blobs.replace_data("k", b"new", now_ms=500)  # a clock behind still grows it
    assert newer == 1001
    with pytest.raises(NoBlob):  # a download of the old version stops
        blobs.chunk("k", version, 0, 10)
    assert blobs.chunk("k", newer, 0, 10) == b"new"
    blobs.set_meta("k", BlobMeta(()))
    assert blobs.get("k").meta == BlobMeta(())
    blobs.create("a", META, b"", now_ms=1)
    assert [b.key for b in blobs.entries("")] == ["a", "k"]
    assert [b.key for b in blobs.entries("a")] == ["k"]
    assert blobs.count() == 2
    blobs.delete("k")
    for gone in (lambda: blobs.delete("k"), lambda: blobs.set_meta("k", META)):
        with pytest.raises(NoBlob):
            gone()
    assert blobs.get("k") is None


def test_a_code_package_reads_as_blobs(nimbus_store):
    conf = {"topology.submitter.principal": "alice"}
    nimbus_store.save_topology("t-1", "t", conf, {"numbers": {}}, DATA, now=1.0)
    jar = code_blob(nimbus_store, "t-1", JAR)
    assert jar.size == len(DATA) and jar.conf == conf
    offsets = range(0, 300_000, 100_000)
    parts = [code_chunk(nimbus_store, jar, offset, 100_000) for offset in offsets]
    assert b"".join(parts) == DATA
    conf_blob = code_blob(nimbus_store, "t-1", CONF)
    assert json.loads(code_chunk(nimbus_store, conf_blob, 0, 1000)) == conf
    nimbus_store.update_conf("t-1", {**conf, "topology.workers": 3})
    assert code_chunk(nimbus_store, conf_blob, 0, 1000) is None  # changed: that version is gone
    assert code_blob(nimbus_store, "t-1", CONF).version != conf_blob.version
    assert code_blob(nimbus_store, "nope", JAR) is None
