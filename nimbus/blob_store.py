"""Blobs in nimbus's SQL store (the same database as nimbus/store.py: SQLite by default,
PostgreSQL when nimbuses share it), so every nimbus of an HA group reads the same blobs and
a new leader has them all without copying anything.

One row per key: its version, its meta (ACL and requested replication, JSON) and its bytes.
Chunks are read with SQL substr, so a download never holds a whole blob in memory; a chunk
names the version it reads, so a download never mixes two versions of a blob.
"""

from __future__ import annotations

import json
import time
from collections.abc import Iterator
from dataclasses import dataclass

from sqlalchemy import (
    BigInteger,
    Column,
    Integer,
    LargeBinary,
    MetaData,
    String,
    Table,
    Text,
    delete,
    func,
    insert,
    select,
    update,
)
from sqlalchemy.engine import Engine
from sqlalchemy.exc import DBAPIError, IntegrityError

from .blob_acl import BlobMeta

metadata = MetaData()
blobs = Table(
    "blobs",
    metadata,
    Column("key", String(255), primary_key=True),
    Column("version", BigInteger, nullable=False),
    Column("meta", Text, nullable=False),
    Column("size", Integer, nullable=False),
    Column("data", LargeBinary, nullable=False),
)


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


def next_version(previous: int, now_ms: int) -> int:
    """Storm promises only that a changed blob has a different version; squall's grows, so
    a client can also tell which is newer. Milliseconds, never reused after a delete."""
    return max(previous + 1, now_ms)


class BlobStore:
    def __init__(self, engine: Engine) -> None:
        self.engine = engine
        for attempt in range(5):  # nimbuses started together race to create the table
            try:
                metadata.create_all(engine)
                break
            except DBAPIError:
                if attempt == 4:
                    raise
                time.sleep(0.05 * (attempt + 1))

    def get(self, key: str) -> StoredBlob | None:
        with self.engine.connect() as db:
            row = db.execute(
                select(blobs.c.key, blobs.c.version, blobs.c.meta, blobs.c.size).where(
                    blobs.c.key == key
                )
            ).first()
        if row is None:
            return None
        return StoredBlob(row.key, row.version, BlobMeta.from_json(json.loads(row.meta)), row.size)

    def count(self) -> int:
        with self.engine.connect() as db:
            return int(db.execute(select(func.count()).select_from(blobs)).scalar() or 0)

    def create(self, key: str, meta: BlobMeta, data: bytes, now_ms: int) -> int:
        try:
            with self.engine.begin() as db:
                db.execute(
                    insert(blobs).values(
                        key=key,
                        version=now_ms,
                        meta=json.dumps(meta.to_json()),
                        size=len(data),
                        data=data,
                    )
                )
        except IntegrityError as exc:
            raise BlobExists(key) from exc
        return now_ms

    def replace_data(self, key: str, data: bytes, now_ms: int) -> int:
        with self.engine.begin() as db:
            previous = db.execute(select(blobs.c.version).where(blobs.c.key == key)).scalar()
            if previous is None:
                raise NoBlob(key)
            version = next_version(previous, now_ms)
            db.execute(
                update(blobs)
                .where(blobs.c.key == key)
                .values(version=version, size=len(data), data=data)
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
        if done.rowcount == 0:
            raise NoBlob(key)

    def chunk(self, key: str, version: int, offset: int, size: int) -> bytes:
        """`size` bytes from `offset` of that version; NoBlob once it was replaced or deleted."""
        with self.engine.connect() as db:
            data = db.execute(
                select(func.substr(blobs.c.data, offset + 1, size)).where(
                    blobs.c.key == key, blobs.c.version == version
                )
            ).scalar()
        if data is None:
            raise NoBlob(key)
        return bytes(data)

    def entries(self, after: str) -> Iterator[StoredBlob]:
        """Every blob with a key after `after`, in key order (meta, no data)."""
        with self.engine.connect() as db:
            rows = db.execute(
                select(blobs.c.key, blobs.c.version, blobs.c.meta, blobs.c.size)
                .where(blobs.c.key > after)
                .order_by(blobs.c.key)
            ).all()
        for row in rows:
            yield StoredBlob(
                row.key, row.version, BlobMeta.from_json(json.loads(row.meta)), row.size
            )
