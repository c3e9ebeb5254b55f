"""Where a partition's committed position lives: the offsets and cuts nodes of the seed's
consumer layout.

Writes are conditional on the node's version as last read or written, so an owner that lost
the partition without noticing cannot overwrite its successor's offset: the write fails with
`PositionNotStored` and the owner stops reading. A write while the connection is down fails
the same way rather than wait for the connection: whether the session survives is unknown.
"""

from __future__ import annotations

import json
from typing import Protocol

from kazoo.client import KazooClient, KazooState
from kazoo.exceptions import KazooException, NoNodeError

from squall.recipes.offsets import Position


class PositionNotStored(Exception):
    """Someone else wrote the position since we last read it, or the connection is down."""


class OffsetStore(Protocol):
    def load(self) -> Position: ...  # pragma: no cover

    def save_offset(self, offset: int) -> None: ...  # pragma: no cover

    def save_cuts(self, cuts: tuple[int, ...]) -> None: ...  # pragma: no cover


class ZkOffsetStore:
    def __init__(self, zk: KazooClient, offset_path: str, cuts_path: str) -> None:
        self.zk = zk
        self.paths = {"offset": offset_path, "cuts": cuts_path}
        self.versions: dict[str, int | None] = {}

    def _read(self, kind: str) -> bytes | None:
        try:
            data, stat = self.zk.get(self.paths[kind])
        except NoNodeError:
            self.versions[kind] = None
            return None
        self.versions[kind] = stat.version
        return data

    def load(self) -> Position:
        offset = int(self._read("offset") or b"0")
        cuts = self._read("cuts")
        return Position(offset, tuple(json.loads(cuts)) if cuts else ())

    def _write(self, kind: str, data: bytes) -> None:
        path, version = self.paths[kind], self.versions.get(kind)
        if self.zk.state != KazooState.CONNECTED:
            raise PositionNotStored(f"{path}: not connected")
        try:
            if version is None:
                self.zk.create(path, data, makepath=True)
                self.versions[kind] = 0
            else:
                self.versions[kind] = self.zk.set(path, data, version=version).version
        except KazooException as e:  # BadVersion, NodeExists, NoNode: fenced; or connection
            raise PositionNotStored(path) from e

    def save_offset(self, offset: int) -> None:
        self._write("offset", str(offset).encode())

    def save_cuts(self, cuts: tuple[int, ...]) -> None:
        self._write("cuts", json.dumps(list(cuts)).encode())
