"""Code uploads in progress and finished (Storm's inbox), with a size limit and expiry.

Only the controller thread touches an Inbox, so it needs no locks. Locations handed to clients
are opaque names; a client can never make nimbus open a path of its choosing.
"""

from __future__ import annotations

import secrets
from dataclasses import dataclass
from pathlib import Path

from squall import thrift_api as T


@dataclass
class Upload:
    path: Path
    size: int
    started_at: float  # monotonic
    finished: bool = False


class Inbox:
    def __init__(self, directory: Path, max_bytes: int) -> None:
        self.directory = directory
        self.max_bytes = max_bytes
        self.uploads: dict[str, Upload] = {}
        directory.mkdir(parents=True, exist_ok=True)
        for stale in directory.glob("upload-*"):  # left by an earlier nimbus process
            stale.unlink(missing_ok=True)

    def begin(self, now: float) -> str:
        location = f"upload-{secrets.token_hex(12)}.tgz"
        path = self.directory / location
        path.touch()
        self.uploads[location] = Upload(path, 0, now)
        return location

    def _open(self, location: str) -> Upload:
        upload = self.uploads.get(location)
        if upload is None:
            raise T.InvalidTopologyException(msg=f"no upload in progress at {location!r}")
        return upload

    def append(self, location: str, chunk: bytes) -> None:
        upload = self._open(location)
        if upload.finished:
            raise T.InvalidTopologyException(msg=f"upload {location!r} is already finished")
        if upload.size + len(chunk) > self.max_bytes:
            self.discard(location)
            raise T.InvalidTopologyException(
                msg=f"upload exceeds nimbus.upload.max.bytes ({self.max_bytes} bytes)"
            )
        with upload.path.open("ab") as f:
            f.write(chunk)
        upload.size += len(chunk)

    def finish(self, location: str) -> None:
        self._open(location).finished = True

    def take(self, location: str) -> Path:
        """Hand a finished upload over (to the code store); it leaves the inbox."""
        upload = self._open(location)
        if not upload.finished:
            raise T.InvalidTopologyException(msg=f"upload {location!r} was not finished")
        del self.uploads[location]
        return upload.path

    def discard(self, location: str) -> None:
        upload = self.uploads.pop(location, None)
        if upload:
            upload.path.unlink(missing_ok=True)

    def expire(self, now: float, max_age: float) -> list[str]:
        old = [loc for loc, u in self.uploads.items() if now - u.started_at > max_age]
        for location in old:
            self.discard(location)
        return old
