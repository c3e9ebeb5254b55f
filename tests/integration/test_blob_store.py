"""Blobs in nimbus's store on SQLite and on a real PostgreSQL server: bytes stored and read
as bounded chunk rows (never one value holding the whole blob), versions, usage per owner,
a store from before chunking upgraded in place, and the code package read as Storm's
topology blobs."""

import io
import json
import random

import pytest
from sqlalchemy import (
    BigInteger,
    Column,
    Integer,
    LargeBinary,
    MetaData,
    String,
    Table,
    Text,
    func,
    select,
    text,
)

from squall.nimbus import store
from squall.nimbus.blobs import blob_store
from squall.nimbus.blobs.blob_acl import ALL, USER, Ace, BlobMeta
from squall.nimbus.blobs.blob_store import STORE_CHUNK, BlobExists, BlobStore, NoBlob
from squall.nimbus.blobs.code_blobs import CONF, JAR, code_blob, code_chunk
from squall.nimbus.blobs.user_quotas import Usage

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


class SpyReader(io.BytesIO):
    """The upload file: records every read size, so a test sees the store never asks for
    the whole blob at once (read() or read(-1) would)."""

    def __init__(self, data: bytes) -> None:
        super().__init__(data)
        self.asked: list[int] = []

    def read(self, size: int | None = -1) -> bytes:
        self.asked.append(-1 if size is None else size)
        return super().read(size)


def _rows(engine, key):
    with engine.connect() as db:
        return db.execute(
            select(blob_store.blob_chunks.c.version, func.length(blob_store.blob_chunks.c.data))
            .where(blob_store.blob_chunks.c.key == key)
            .order_by(blob_store.blob_chunks.c.seq)
        ).all()


def test_a_large_blob_is_stored_and_read_in_bounded_chunks(nimbus_store):
    blobs = BlobStore(nimbus_store.engine)
    big = random.Random(3).randbytes(3 * STORE_CHUNK + 12345)
    source = SpyReader(big)
    version = blobs.create("big", META, source, now_ms=10, owner="alice")
    assert source.asked and set(source.asked) == {STORE_CHUNK}  # never the whole file
    rows = _rows(nimbus_store.engine, "big")
    assert [n for _, n in rows] == [STORE_CHUNK] * 3 + [12345]
    with nimbus_store.engine.connect() as db:  # the blobs row holds no bytes
        whole = db.execute(select(func.length(blob_store.blobs.c.data))).scalar()
    assert whole == 0
    assert blobs.get("big").size == len(big) and blobs.get("big").owner == "alice"
    step = 300 * 1024  # a download's chunk crosses row boundaries
    parts = [blobs.chunk("big", version, o, step) for o in range(0, len(big) + step, step)]
    assert b"".join(parts) == big and parts[-1] == b""
    assert (
        blobs.chunk("big", version, STORE_CHUNK - 5, 10) == big[STORE_CHUNK - 5 : STORE_CHUNK + 5]
    )
    newer = blobs.replace_data("big", SpyReader(big[:100]), now_ms=20)
    assert [(v, n) for v, n in _rows(nimbus_store.engine, "big")] == [(newer, 100)]
    assert blobs.chunk("big", newer, 0, 1000) == big[:100]
    blobs.delete("big")
    assert _rows(nimbus_store.engine, "big") == []


def test_usage_is_counted_per_owner(nimbus_store):
    blobs = BlobStore(nimbus_store.engine)
    blobs.create("a1", META, b"x" * 10, now_ms=1, owner="alice")
    blobs.create("a2", META, b"x" * 5, now_ms=1, owner="alice")
    blobs.create("b1", META, b"x" * 7, now_ms=1, owner="bob")
    blobs.create("n1", META, b"x" * 3, now_ms=1)
    assert blobs.usage("alice") == Usage(2, 15)
    assert blobs.usage("bob") == Usage(1, 7)
    assert blobs.usage(None) == Usage(1, 3)  # open mode's one user
    assert blobs.usage("carol") == Usage(0, 0)


def test_a_store_from_before_chunking_is_upgraded_and_its_blobs_still_read(nimbus_store):
    engine = nimbus_store.engine
    old = MetaData()
    Table(
        "blobs",
        old,
        Column("key", String(255), primary_key=True),
        Column("version", BigInteger, nullable=False),
        Column("meta", Text, nullable=False),
        Column("size", Integer, nullable=False),
        Column("data", LargeBinary, nullable=False),
    )
    old.create_all(engine)
    meta = json.dumps(META.to_json())
    with engine.begin() as db:
        db.execute(
            text("INSERT INTO blobs (key, version, meta, size, data) VALUES (:k, 5, :m, :s, :d)"),
            {"k": "legacy", "m": meta, "s": len(DATA), "d": DATA},
        )
    blobs = BlobStore(engine)
    assert blobs.get("legacy").owner is None and blobs.usage(None) == Usage(1, len(DATA))
    parts = [blobs.chunk("legacy", 5, o, 100_000) for o in range(0, 300_000, 100_000)]
    assert b"".join(parts) == DATA
    BlobStore(engine)  # a second nimbus starting finds it upgraded
    newer = blobs.replace_data("legacy", b"chunked now", now_ms=9)
    assert blobs.chunk("legacy", newer, 0, 100) == b"chunked now"
