"""Code uploads in progress and finished (Storm's inbox), with a size limit and expiry.

Upload chunks arrive on Thrift threads while the controller thread takes finished uploads, so
every method holds the inbox's lock. Locations handed to clients are opaque names; a client
can never make nimbus open a path of its choosing.
"""

from __future__ import annotations

import secrets
import threading
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
        self.lock = threading.RLock()
        directory.mkdir(parents=True, exist_ok=True)
        for stale in directory.glob("upload-*"):  # left by an earlier nimbus process
            stale.unlink(missing_ok=True)

    def begin(self, now: float) -> str:
        with self.lock:
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
        with self.lock:
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
        with self.lock:
            self._open(location).finished = True

    def check_finished(self, location: str) -> None:
        """Raise unless a finished upload waits at `location` (nothing is taken)."""
        with self.lock:
            if not self._open(location).finished:
                raise T.InvalidTopologyException(msg=f"upload {location!r} was not finished")

    def take(self, location: str) -> Path:
        """Hand a finished upload over (to the code store); it leaves the inbox."""
        with self.lock:
            self.check_finished(location)
            return self.uploads.pop(location).path

    def discard(self, location: str) -> None:
        with self.lock:
            upload = self.uploads.pop(location, None)
            if upload:
                upload.path.unlink(missing_ok=True)

    def expire(self, now: float, max_age: float) -> list[str]:
        with self.lock:
            old = [loc for loc, u in self.uploads.items() if now - u.started_at > max_age]
            for location in old:
                self.discard(location)
            return old
