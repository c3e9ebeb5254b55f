"""Blob uploads and downloads in progress on this nimbus.

An upload's bytes live in the inbox (nimbus/blobs/inbox.py: owner, quotas, random names, expiry),
the same as a code upload's; here is only what the inbox does not know: which key the upload
creates or replaces, and with which meta. A session whose upload the inbox expired is gone
here too. Downloads are (key, version, offset) cursors owned by the identity that began them,
dropped after nimbus.file.copy.expiration.secs idle and capped in number, so a client that
begins and abandons downloads cannot grow nimbus's memory. One identity holds at most an
eighth of the cap (OWNER_SHARE): past it, its own least recently used download ends, so a
user who begins downloads without end churns only their own, not every other user's
(without security every client has no identity: they share the whole cap).

Finishing uploads of one owner is serialized (owner_lock), so two uploads finishing at once
cannot both fit under a per-user quota that only one of them fits under.
"""

from __future__ import annotations

import secrets
import threading
from dataclasses import dataclass, field

from squall import thrift_api as T
from squall.nimbus.blobs.blob_acl import BlobMeta

OWNER_SHARE = 8  # one identity holds at most 1/OWNER_SHARE of nimbus.blob.max.open.downloads


@dataclass(frozen=True)
class PendingUpload:
    key: str
    meta: BlobMeta | None  # None: an update of an existing blob's bytes


@dataclass
class BlobDownload:
    key: str
    version: int
    owner: str | None
    last_used: float  # monotonic
    code: object | None = None  # a code_blobs.CodeBlob when reading a code package
    offset: int = 0


@dataclass
class BlobSessions:
    max_downloads: int
    max_idle: float
    uploads: dict[str, PendingUpload] = field(default_factory=dict)
    downloads: dict[str, BlobDownload] = field(default_factory=dict)
    lock: threading.Lock = field(default_factory=threading.Lock)
    owner_locks: dict[str | None, threading.Lock] = field(default_factory=dict)

    def owner_lock(self, owner: str | None) -> threading.Lock:
        """One lock per blob owner (identities are few: those with a certificate)."""
        with self.lock:
            return self.owner_locks.setdefault(owner, threading.Lock())

    def add_upload(self, location: str, pending: PendingUpload, live: set[str]) -> None:
        """Record the upload at `location`; forget those the inbox no longer holds (`live`)."""
        with self.lock:
            for gone in set(self.uploads) - live:
                del self.uploads[gone]
            self.uploads[location] = pending

    def upload(self, location: str) -> PendingUpload:
        with self.lock:
            pending = self.uploads.get(location)
        if pending is None:
            raise T.AuthorizationException(msg=f"no blob upload session {location!r}")
        return pending

    def end_upload(self, location: str) -> None:
        with self.lock:
            self.uploads.pop(location, None)

    def add_download(self, download: BlobDownload) -> str:
        with self.lock:
            now = download.last_used
            idle = [d for d, x in self.downloads.items() if now - x.last_used > self.max_idle]
            for session in idle:
                del self.downloads[session]
            mine = [d for d, x in self.downloads.items() if x.owner == download.owner]
            shared = download.owner is None  # no identity (security off): everyone's is None
            if not shared and len(mine) >= max(1, self.max_downloads // OWNER_SHARE):
                del self.downloads[min(mine, key=lambda d: self.downloads[d].last_used)]
            elif len(self.downloads) >= self.max_downloads:
                raise T.IllegalStateException(
                    msg=f"nimbus holds {len(self.downloads)} blob downloads "
                    f"(nimbus.blob.max.open.downloads); try again later"
                )
            session = secrets.token_hex(16)
            self.downloads[session] = download
            return session

    def download(self, session: str, principal: str | None, now: float) -> BlobDownload:
        with self.lock:
            download = self.downloads.get(session)
            if download is None or download.owner != principal:
                raise T.AuthorizationException(msg=f"no blob download session {session!r} of yours")
            download.last_used = now
            return download

    def advance(self, session: str, by: int) -> None:
        """Move the cursor; a download that read nothing more is complete and ends."""
        with self.lock:
            download = self.downloads.get(session)
            if download is None:
                return
            if by == 0:
                del self.downloads[session]
            else:
                download.offset += by
