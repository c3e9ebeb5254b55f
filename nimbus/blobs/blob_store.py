"""Blobs in nimbus's SQL store (the same database as nimbus/store.py: SQLite by default,
PostgreSQL when nimbuses share it), so every nimbus of an HA group reads the same blobs and
a new leader has them all without copying anything. Files on one nimbus's disk would have
to be copied to every other nimbus before it could lead; the shared database already is
the HA model, so the bytes stay in it.

`blobs` has one row per key: its version, its meta (ACL and requested replication, JSON),
its size and its owner (who created it: per-user quotas count by it). Its bytes are rows of
`blob_chunks`, STORE_CHUNK bytes each, keyed by (key, version, seq): an upload is written
from its file one chunk at a time and a download reads the one or two rows it needs, so
neither ever holds a whole blob in memory (a finished 256 MiB blob used to be read whole and
stored as one value: nimbus grew by its size). A chunk names the version it reads, so a
download never mixes two versions of a blob. Blobs stored before chunking keep their bytes
in `blobs.data` and are read from there with SQL substr.
"""

from __future__ import annotations

import io
import json
import time
from collections.abc import Iterator
from dataclasses import dataclass
from typing import BinaryIO

from sqlalchemy import (
    BigInteger,
    Column,
    Index,
    Integer,
    LargeBinary,
    MetaData,
    String,
    Table,
    Text,
    delete,
    func,
    insert,
    inspect,
    select,
    text,
    update,
)
from sqlalchemy.engine import Connection, Engine
from sqlalchemy.exc import DBAPIError, IntegrityError

from squall.nimbus.blobs.blob_acl import BlobMeta
from squall.nimbus.blobs.user_quotas import Usage

STORE_CHUNK = 1024 * 1024  # bytes per blob_chunks row

metadata = MetaData()
blobs = Table(
    "blobs",
    metadata,
    Column("key", String(255), primary_key=True),
    Column("version", BigInteger, nullable=False),
    Column("meta", Text, nullable=False),
    Column("size", BigInteger, nullable=False),
    Column("data", LargeBinary, nullable=False),  # empty since chunking: see blob_chunks
    Column("owner", String(255), nullable=True),  # None: open mode, or stored before quotas
)
blob_chunks = Table(
    "blob_chunks",
    metadata,
    Column("key", String(255), primary_key=True),
    Column("version", BigInteger, primary_key=True),
    Column("seq", Integer, primary_key=True),
    Column("data", LargeBinary, nullable=False),
)
by_owner = Index("blobs_by_owner", blobs.c.owner)


class BlobExists(Exception):
    pass


class NoBlob(Exception):
    pass


@dataclass(frozen=True)
class StoredBlob:
    key: str
    version: int
    meta: BlobMeta
    size: int
    owner: str | None = None


def next_version(previous: int, now_ms: int) -> int:
    """Storm promises only that a changed blob has a different version; squall's grows, so
    a client can also tell which is newer. Milliseconds, never reused after a delete."""
    return max(previous + 1, now_ms)


def chunk_span(offset: int, size: int) -> tuple[int, int]:
    """The first and last blob_chunks seq holding bytes [offset, offset + size)."""
    return offset // STORE_CHUNK, (offset + max(size, 1) - 1) // STORE_CHUNK


def _reader(data: bytes | BinaryIO) -> BinaryIO:
    return io.BytesIO(data) if isinstance(data, bytes | bytearray) else data


def _owned_by(owner: str | None):  # noqa: ANN202 - a SQLAlchemy clause
    return blobs.c.owner.is_(None) if owner is None else blobs.c.owner == owner


def _upgrade(engine: Engine) -> None:
    """A store made before quotas has no owner column (its blobs belong to None)."""
    if "owner" not in {c["name"] for c in inspect(engine).get_columns("blobs")}:
        with engine.begin() as db:
            db.execute(text("ALTER TABLE blobs ADD COLUMN owner VARCHAR(255)"))
    by_owner.create(engine, checkfirst=True)


def _write_chunks(db: Connection, key: str, version: int, source: BinaryIO) -> int:
    """Copy `source` into blob_chunks one STORE_CHUNK at a time; the bytes written."""
    size = seq = 0
    while piece := source.read(STORE_CHUNK):
        db.execute(insert(blob_chunks).values(key=key, version=version, seq=seq, data=piece))
        size += len(piece)
        seq += 1
    return size


class BlobStore:
    def __init__(self, engine: Engine) -> None:
        self.engine = engine
        for attempt in range(5):  # nimbuses started together race to create the tables
            try:
                metadata.create_all(engine)
                _upgrade(engine)
                break
            except DBAPIError:
                if attempt == 4:
                    raise
                time.sleep(0.05 * (attempt + 1))

    def get(self, key: str) -> StoredBlob | None:
        with self.engine.connect() as db:
            row = db.execute(
                select(
                    blobs.c.key, blobs.c.version, blobs.c.meta, blobs.c.size, blobs.c.owner
                ).where(blobs.c.key == key)
            ).first()
        if row is None:
            return None
        meta = BlobMeta.from_json(json.loads(row.meta))
        return StoredBlob(row.key, row.version, meta, row.size, row.owner)

    def count(self) -> int:
        with self.engine.connect() as db:
            return int(db.execute(select(func.count()).select_from(blobs)).scalar() or 0)

    def usage(self, owner: str | None) -> Usage:
        """How many blobs `owner` created and their bytes."""
        with self.engine.connect() as db:
            row = db.execute(
                select(func.count(), func.coalesce(func.sum(blobs.c.size), 0)).where(
                    _owned_by(owner)
                )
            ).one()
        return Usage(int(row[0]), int(row[1]))

    def create(
        self,
        key: str,
        meta: BlobMeta,
        data: bytes | BinaryIO,
        now_ms: int,
        owner: str | None = None,
    ) -> int:
        """Store a new blob, its bytes read from `data` in STORE_CHUNK pieces."""
        try:
            with self.engine.begin() as db:
                db.execute(
                    insert(blobs).values(
                        key=key,
                        version=now_ms,
                        meta=json.dumps(meta.to_json()),
                        size=0,
                        data=b"",
                        owner=owner,
                    )
                )
                size = _write_chunks(db, key, now_ms, _reader(data))
                db.execute(update(blobs).where(blobs.c.key == key).values(size=size))
        except IntegrityError as exc:
            raise BlobExists(key) from exc
        return now_ms

    def replace_data(self, key: str, data: bytes | BinaryIO, now_ms: int) -> int:
        with self.engine.begin() as db:
            previous = db.execute(select(blobs.c.version).where(blobs.c.key == key)).scalar()
            if previous is None:
                raise NoBlob(key)
            version = next_version(previous, now_ms)
            size = _write_chunks(db, key, version, _reader(data))
            db.execute(
                update(blobs).where(blobs.c.key == key).values(version=version, size=size, data=b"")
            )
            db.execute(
                delete(blob_chunks).where(
                    blob_chunks.c.key == key, blob_chunks.c.version != version
                )
            )
        return version

    def set_meta(self, key: str, meta: BlobMeta) -> None:
        with self.engine.begin() as db:
            done = db.execute(
                update(blobs).where(blobs.c.key == key).values(meta=json.dumps(meta.to_json()))
            )
        if done.rowcount == 0:
            raise NoBlob(key)

    def delete(self, key: str) -> None:
        with self.engine.begin() as db:
            done = db.execute(delete(blobs).where(blobs.c.key == key))
            db.execute(delete(blob_chunks).where(blob_chunks.c.key == key))
        if done.rowcount == 0:
            raise NoBlob(key)

    def chunk(self, key: str, version: int, offset: int, size: int) -> bytes:
        """`size` bytes from `offset` of that version; NoBlob once it was replaced or deleted.
        Reads at most the two blob_chunks rows the range touches."""
        with self.engine.connect() as db:
            row = db.execute(
                select(blobs.c.size, func.length(blobs.c.data)).where(
                    blobs.c.key == key, blobs.c.version == version
                )
            ).first()
            if row is None:
                raise NoBlob(key)
            if row[1]:  # stored before chunking: the bytes are in the blobs row
                data = db.execute(
                    select(func.substr(blobs.c.data, offset + 1, size)).where(
                        blobs.c.key == key, blobs.c.version == version
                    )
                ).scalar()
                return bytes(data or b"")
            if offset >= row[0] or size <= 0:
                return b""
            first, last = chunk_span(offset, size)
            pieces = db.execute(
                select(blob_chunks.c.data)
                .where(
                    blob_chunks.c.key == key,
                    blob_chunks.c.version == version,
                    blob_chunks.c.seq.between(first, last),
                )
                .order_by(blob_chunks.c.seq)
            ).scalars()
            joined = b"".join(bytes(p) for p in pieces)
        start = offset - first * STORE_CHUNK
        return joined[start : start + size]

    def entries(self, after: str) -> Iterator[StoredBlob]:
        """Every blob with a key after `after`, in key order (meta, no data)."""
        with self.engine.connect() as db:
            rows = db.execute(
                select(blobs.c.key, blobs.c.version, blobs.c.meta, blobs.c.size, blobs.c.owner)
                .where(blobs.c.key > after)
                .order_by(blobs.c.key)
            ).all()
        for row in rows:
            meta = BlobMeta.from_json(json.loads(row.meta))
            yield StoredBlob(row.key, row.version, meta, row.size, row.owner)
