"""A topology's code package as Storm's three blobs, read straight from the code store's
rows (nimbus/store.py `topologies`), never copied:

- `<id>-stormjar.jar`: the code package as uploaded (squall's is a .tgz, not a jar),
- `<id>-stormconf.ser`: the topology conf as it is now, JSON (Storm's is Java-serialized),
- `<id>-stormcode.ser`: the validated structure, JSON (Storm's is a serialized StormTopology).

They are read-only: they live and die with their topology (submit and kill write them).
The conf's and the structure's version is a digest of their bytes, so it changes exactly
when they do (the conf changes with setTopologyConf). The jar never changes in its
topology's life (a resubmit is a new id): its version is a digest of the id and its size,
and asking for it never loads the jar (up to nimbus.upload.max.bytes; sixteen callers
asking for a jar's metadata at once held sixteen copies).
"""

from __future__ import annotations

import hashlib
import json
from dataclasses import dataclass

from sqlalchemy import func, select

from squall.nimbus.store import Store, topologies

JAR, CONF, CODE = "-stormjar.jar", "-stormconf.ser", "-stormcode.ser"


@dataclass(frozen=True)
class CodeBlob:
    topology: str
    suffix: str
    version: int
    size: int
    conf: dict  # the topology's conf: who may read its blobs


def _digest(data: bytes) -> int:
    """A positive i64 from the bytes (Thrift's version is a signed 64-bit integer)."""
    return int.from_bytes(hashlib.sha256(data).digest()[:8], "big") >> 1


def _json_bytes(value: dict) -> bytes:
    return json.dumps(value, sort_keys=True, separators=(",", ":")).encode()


def _content(store: Store, tid: str, suffix: str) -> bytes | None:
    stored = store.topology(tid)
    if stored is None:
        return None
    if suffix == CONF:
        return _json_bytes(stored.conf)
    if suffix == CODE:
        return _json_bytes(stored.structure)
    return store.code(tid)


def code_blob(store: Store, tid: str, suffix: str) -> CodeBlob | None:
    stored = store.topology(tid)
    if stored is None:
        return None
    if suffix == JAR:
        with store.engine.connect() as db:
            size = db.execute(
                select(func.length(topologies.c.code)).where(topologies.c.id == tid)
            ).scalar()
        if size is None:
            return None
        return CodeBlob(tid, suffix, _digest(f"{tid}{JAR}:{size}".encode()), size, stored.conf)
    data = _content(store, tid, suffix)
    if data is None:
        return None
    return CodeBlob(tid, suffix, _digest(data), len(data), stored.conf)


def code_chunk(store: Store, blob: CodeBlob, offset: int, size: int) -> bytes | None:
    """`size` bytes from `offset`, None once the blob is gone or changed. The jar is read
    with SQL substr (it may be large and never changes); conf and structure are small."""
    if blob.suffix == JAR:
        with store.engine.connect() as db:
            data = db.execute(
                select(func.substr(topologies.c.code, offset + 1, size)).where(
                    topologies.c.id == blob.topology
                )
            ).scalar()
        return None if data is None else bytes(data)
    data = _content(store, blob.topology, blob.suffix)
    if data is None or _digest(data) != blob.version:
        return None
    return data[offset : offset + size]


def code_blob_keys(tids: set[str]) -> list[str]:
    return sorted(f"{tid}{suffix}" for tid in tids for suffix in (JAR, CONF, CODE))
