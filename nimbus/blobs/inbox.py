"""Code uploads in progress and finished (Storm's inbox), owned by the identity that began
them, with size limits, quotas and expiry (the decisions: nimbus/blobs/upload_policy.py).

Upload chunks arrive on Thrift threads while the controller thread takes finished uploads, so
every method holds the inbox's lock. Locations handed to clients are random, opaque names;
a client can never make nimbus open a path of its choosing, nor guess another's upload.
"""

from __future__ import annotations

import secrets
import threading
from dataclasses import dataclass
from pathlib import Path

from squall import thrift_api as T
from squall.nimbus.blobs.upload_policy import (
    OpenUpload,
    UploadQuota,
    append_problem,
    begin_problem,
    expired,
    may_use,
)


@dataclass
class Upload:
    path: Path
    size: int
    last_active: float  # monotonic: begun, or its last chunk or finish
    owner: str | None = None
    finished: bool = False

    def view(self) -> OpenUpload:
        return OpenUpload(self.owner, self.size)


class Inbox:
    def __init__(self, directory: Path, quota: UploadQuota) -> None:
        self.directory = directory
        self.quota = quota
        self.uploads: dict[str, Upload] = {}
        self.lock = threading.RLock()
        directory.mkdir(parents=True, exist_ok=True)
        for stale in directory.glob("upload-*"):  # left by an earlier nimbus process
            stale.unlink(missing_ok=True)

    def begin(self, now: float, owner: str | None = None) -> str:
        with self.lock:
            problem = begin_problem((u.view() for u in self.uploads.values()), owner, self.quota)
            if problem:
                raise T.InvalidTopologyException(msg=problem)
            # no extension: a jar or a tgz may be sent to it (kind() tells them apart)
            location = f"upload-{secrets.token_hex(16)}"
            path = self.directory / location
            path.touch()
            self.uploads[location] = Upload(path, 0, now, owner)
            return location

    def _open(self, location: str) -> Upload:
        upload = self.uploads.get(location)
        if upload is None:
            raise T.InvalidTopologyException(msg=f"no upload in progress at {location!r}")
        return upload

    def _owned(self, location: str, principal: str | None) -> Upload:
        upload = self._open(location)
        if not may_use(upload.owner, principal):
            raise T.AuthorizationException(msg=f"upload {location!r} belongs to another identity")
        return upload

    def check_owner(self, location: str, principal: str | None) -> None:
        """Raise AuthorizationException if an upload at `location` belongs to someone else
        (an unknown location passes: the caller's next step reports it)."""
        with self.lock:
            upload = self.uploads.get(location)
            if upload is not None and not may_use(upload.owner, principal):
                raise T.AuthorizationException(
                    msg=f"upload {location!r} belongs to another identity"
                )

    def append(self, location: str, chunk: bytes, now: float, principal: str | None) -> None:
        with self.lock:
            upload = self._owned(location, principal)
            if upload.finished:
                raise T.InvalidTopologyException(msg=f"upload {location!r} is already finished")
            views = [u.view() for u in self.uploads.values()]
            problem = append_problem(views, upload.view(), len(chunk), self.quota)
            if problem:
                self.discard(location)
                raise T.InvalidTopologyException(msg=problem)
            with upload.path.open("ab") as f:
                f.write(chunk)
            upload.size += len(chunk)
            upload.last_active = now

    def size(self, location: str) -> int:
        """Bytes received so far at `location` (0 when there is no such upload)."""
        with self.lock:
            upload = self.uploads.get(location)
            return upload.size if upload else 0

    def locations(self) -> set[str]:
        with self.lock:
            return set(self.uploads)

    def finish(self, location: str, now: float, principal: str | None) -> None:
        with self.lock:
            upload = self._owned(location, principal)
            upload.finished = True
            upload.last_active = now

    def check_finished(self, location: str) -> None:
        """Raise unless a finished upload waits at `location` (nothing is taken)."""
        with self.lock:
            if not self._open(location).finished:
                raise T.InvalidTopologyException(msg=f"upload {location!r} was not finished")

    def finished_path(self, location: str) -> Path:
        """The file of the finished upload at `location`, left in the inbox (raises as
        check_finished)."""
        with self.lock:
            self.check_finished(location)
            return self.uploads[location].path

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
        """Drop uploads untouched for max_age seconds, finished-but-unsubmitted ones too."""
        with self.lock:
            old = [loc for loc, u in self.uploads.items() if expired(u.last_active, now, max_age)]
            for location in old:
                self.discard(location)
            return old
