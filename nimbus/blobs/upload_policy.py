"""Who may touch an upload, and how many uploads an identity may hold: pure decisions the
inbox applies under its lock.

Before, any client could append to another's upload and submit it, and 5,000 uploads opened
in 3 s filled the disk. An upload now belongs to the identity that began it (the TLS client
certificate's CN; in open mode every client is None, so anyone may use any upload, as in
Storm), and open uploads (begun, finished or not, not yet submitted) are capped per identity
in number and bytes, and in number overall. nimbus.admins are not held to the overall
number, only to their own: other users' uploads can never lock the admin out.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any

from squall.nimbus.rpc.authorizer import Acl


@dataclass(frozen=True)
class UploadQuota:
    max_open: int  # open uploads of one identity
    max_open_bytes: int  # bytes of one identity's open uploads
    max_open_total: int  # open uploads of everyone
    max_bytes: int  # one upload (nimbus.upload.max.bytes)
    admins: frozenset[str] = frozenset()  # nimbus.admins: not held to max_open_total

    @staticmethod
    def from_conf(conf: dict[str, Any]) -> UploadQuota:
        return UploadQuota(
            max_open=conf["nimbus.upload.max.open"],
            max_open_bytes=conf["nimbus.upload.max.open.bytes"],
            max_open_total=conf["nimbus.upload.max.open.total"],
            max_bytes=conf["nimbus.upload.max.bytes"],
            admins=Acl.from_conf(conf).admins,
        )


@dataclass(frozen=True)
class OpenUpload:
    owner: str | None
    size: int


def may_use(owner: str | None, principal: str | None) -> bool:
    """Only the identity that began an upload may append to, finish, submit or drop it."""
    return owner == principal


def _who(principal: str | None) -> str:
    return repr(principal) if principal is not None else "anonymous clients"


def begin_problem(
    uploads: Iterable[OpenUpload], principal: str | None, quota: UploadQuota
) -> str | None:
    """Why `principal` may not begin another upload now, or None."""
    uploads = list(uploads)
    mine = sum(1 for u in uploads if u.owner == principal)
    if mine >= quota.max_open:
        return (
            f"{_who(principal)} already hold {mine} open uploads "
            f"(nimbus.upload.max.open is {quota.max_open}); submit or wait for them to expire"
        )
    if principal not in quota.admins and len(uploads) >= quota.max_open_total:
        return (
            f"nimbus holds {len(uploads)} open uploads "
            f"(nimbus.upload.max.open.total is {quota.max_open_total}); try again later"
        )
    return None


def append_problem(
    uploads: Iterable[OpenUpload], upload: OpenUpload, chunk: int, quota: UploadQuota
) -> str | None:
    """Why `chunk` more bytes may not go to `upload` (one of `uploads`), or None."""
    if upload.size + chunk > quota.max_bytes:
        return f"upload exceeds nimbus.upload.max.bytes ({quota.max_bytes} bytes)"
    held = sum(u.size for u in uploads if u.owner == upload.owner)
    if held + chunk > quota.max_open_bytes:
        return (
            f"{_who(upload.owner)} would hold {held + chunk} bytes of open uploads "
            f"(nimbus.upload.max.open.bytes is {quota.max_open_bytes})"
        )
    return None


def expired(last_active: float, now: float, max_age: float) -> bool:
    """An upload untouched for longer than nimbus.inbox.jar.expiration.secs is dropped."""
    return now - last_active > max_age
