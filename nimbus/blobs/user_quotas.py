"""Per-user quotas: pure decisions on what one user already holds, applied by the blobstore
calls (nimbus/blobs/blob_calls.py) and by submit (nimbus/rpc/user_requests.py).

Before, `nimbus.blob.max.count` was the only bound: one user created 9,998 blobs and then
every other user and the admin were refused, and blob bytes were unbounded. Now each user
(the TLS client certificate's CN; in open mode every client is the one user None) holds at
most `nimbus.blob.max.count.per.user` blobs of at most `nimbus.blob.max.bytes.per.user`
bytes in all, and at most `nimbus.topologies.max.per.user` topologies, so one user at a
quota never blocks another. nimbus.admins are exempt, including from the overall
`nimbus.blob.max.count`, so a user's excess can never lock the admin out.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any


@dataclass(frozen=True)
class Usage:
    count: int
    bytes: int


@dataclass(frozen=True)
class BlobQuota:
    max_bytes: int  # one blob (nimbus.blob.max.bytes)
    max_count: int  # all blobs of everyone (nimbus.blob.max.count); admins are exempt
    max_count_per_user: int
    max_bytes_per_user: int

    @staticmethod
    def from_conf(conf: dict[str, Any]) -> BlobQuota:
        return BlobQuota(
            max_bytes=conf["nimbus.blob.max.bytes"],
            max_count=conf["nimbus.blob.max.count"],
            max_count_per_user=conf["nimbus.blob.max.count.per.user"],
            max_bytes_per_user=conf["nimbus.blob.max.bytes.per.user"],
        )


def _who(user: str | None) -> str:
    return repr(user) if user is not None else "anonymous clients"


def create_problem(
    user: str | None, mine: Usage, total: int, quota: BlobQuota, exempt: bool
) -> str | None:
    """Why `user`, holding `mine`, may not create another blob while nimbus holds `total`."""
    if exempt:
        return None
    if mine.count >= quota.max_count_per_user:
        return (
            f"{_who(user)} hold {mine.count} blobs "
            f"(nimbus.blob.max.count.per.user is {quota.max_count_per_user}); delete some first"
        )
    if total >= quota.max_count:
        return f"nimbus holds {total} blobs (nimbus.blob.max.count is {quota.max_count})"
    return None


def bytes_problem(
    user: str | None, mine: Usage, replaced: int, size: int, quota: BlobQuota, exempt: bool
) -> str | None:
    """Why a blob of `size` bytes (in place of one of `replaced` bytes, 0 for a new blob) may
    not be stored for `user`, who holds `mine`. One blob's limit binds admins too."""
    if size > quota.max_bytes:
        return f"blob exceeds nimbus.blob.max.bytes ({quota.max_bytes} bytes)"
    held = mine.bytes - replaced + size
    if exempt or held <= quota.max_bytes_per_user:
        return None
    return (
        f"{_who(user)} would hold {held} bytes of blobs "
        f"(nimbus.blob.max.bytes.per.user is {quota.max_bytes_per_user}; "
        f"{_who(user)} hold {mine.bytes} bytes in {mine.count} blobs)"
    )


def topology_problem(owner: str, owners: Iterable[str], limit: int, exempt: bool) -> str | None:
    """Why `owner` may not submit another topology, given the owners of those nimbus runs."""
    mine = sum(1 for o in owners if o == owner)
    if exempt or mine < limit:
        return None
    return (
        f"user {owner!r} runs {mine} topologies (nimbus.topologies.max.per.user is {limit}); "
        f"kill one first"
    )
