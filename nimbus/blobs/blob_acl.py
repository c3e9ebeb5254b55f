"""Who may do what to a blob: Storm's BlobStoreAclHandler over plain data.

A blob's ACL is a list of entries (USER name, or OTHER for everyone) with access bits READ,
WRITE, ADMIN. The creator always gets all three (Storm normalizes the creator in, so nobody
can lock themselves out of what they made); an anonymous creator (open mode, no identity)
makes the blob world-writable, as Storm does, because nobody else could ever manage it.
nimbus.admins and nimbus.admins.groups may do anything; nimbus.supervisor.users may read.

Also the keys: Storm's key pattern, and the keys reserved for topology code packages.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass, replace

READ, WRITE, ADMIN = 1, 2, 4
ALL = READ | WRITE | ADMIN
OTHER, USER = 1, 2  # Storm's AccessControlType
MAX_ENTRIES = 256  # ACL entries on one blob: a bound on what a client can make nimbus keep
MAX_KEY = 255
_KEY = re.compile(r"^[\w \t._-]+$", re.ASCII)  # Storm's BlobStore KEY_PATTERN
# Storm's names for a topology's blobs; squall serves its code packages under them
CODE_SUFFIXES = ("-stormjar.jar", "-stormconf.ser", "-stormcode.ser")


class BadBlobRequest(ValueError):
    """A key or an ACL that is malformed (Storm's IllegalArgumentException)."""


@dataclass(frozen=True)
class Ace:
    type: int  # OTHER or USER
    name: str | None
    access: int


@dataclass(frozen=True)
class BlobMeta:
    acl: tuple[Ace, ...]
    replication: int | None = None  # as requested; the store decides the effective one

    def to_json(self) -> dict:
        return {
            "acl": [[a.type, a.name, a.access] for a in self.acl],
            "replication": self.replication,
        }

    @staticmethod
    def from_json(data: dict) -> BlobMeta:
        return BlobMeta(tuple(Ace(*entry) for entry in data["acl"]), data.get("replication"))


@dataclass(frozen=True)
class Powers:
    """What the nimbus conf grants regardless of a blob's ACL."""

    admins: frozenset[str] = frozenset()
    admin_groups: frozenset[str] = frozenset()
    supervisors: frozenset[str] = frozenset()


def key_problem(key: str) -> str | None:
    """Why `key` cannot name a blob (Storm's validateKey), or None."""
    if not isinstance(key, str) or not key or key in (".", ".."):
        return f"blob key {key!r} is empty or a dot"
    if len(key) > MAX_KEY:
        return f"blob key is longer than {MAX_KEY} characters"
    if not _KEY.match(key):
        return f"blob key {key!r} may hold only letters, digits, space, tab, '.', '_', '-'"
    return None


def code_package_key(key: str) -> tuple[str, str] | None:
    """(topology id, suffix) when `key` names a part of a topology's code package."""
    for suffix in CODE_SUFFIXES:
        if key.endswith(suffix) and len(key) > len(suffix):
            return key[: -len(suffix)], suffix
    return None


def check_acl(acl: Iterable[Ace]) -> tuple[Ace, ...]:
    """The ACL as given, or BadBlobRequest: bad types, bits, names, duplicated users."""
    entries = tuple(acl)
    if len(entries) > MAX_ENTRIES:
        raise BadBlobRequest(f"an ACL holds at most {MAX_ENTRIES} entries")
    seen: set[str] = set()
    for entry in entries:
        if entry.type not in (OTHER, USER):
            raise BadBlobRequest(f"unknown access control type {entry.type!r}")
        if not isinstance(entry.access, int) or not 0 <= entry.access <= ALL:
            raise BadBlobRequest(f"access {entry.access!r} is not a mask of READ, WRITE, ADMIN")
        if entry.name is not None and (not isinstance(entry.name, str) or len(entry.name) > 256):
            raise BadBlobRequest("an ACL name is a string of at most 256 characters")
        if entry.type == USER and entry.name:
            if entry.name in seen:  # Storm's validateSettableACLs
                raise BadBlobRequest(f"user {entry.name!r} appears more than once in the ACL")
            seen.add(entry.name)
    return entries


def normalized(acl: Iterable[Ace], creator: str | None, mask: int = ALL) -> tuple[Ace, ...]:
    """Storm's normalizeSettableACLs: drop OTHER entries granting nothing, give `creator`
    the rights in `mask` (every right on create, ADMIN on setBlobMeta, so nobody locks
    themselves out), filling a nameless USER entry with the creator's name; with no creator
    identity add OTHER with every right."""
    entries = [a for a in acl if not (a.type == OTHER and a.access == 0)]
    if creator is None:
        if not any(a.type == OTHER and a.access == ALL for a in entries):
            entries.append(Ace(OTHER, None, ALL))
        return tuple(a for a in entries if not (a.type == USER and not a.name))
    named = [a for a in entries if a.type == USER and a.name == creator]
    nameless = [a for a in entries if a.type == USER and not a.name]
    rest = [a for a in entries if a not in named and a not in nameless]
    access = mask
    for a in named + nameless:
        access |= a.access
    return (*rest, Ace(USER, creator, access))


def allowed(
    meta: BlobMeta,
    principal: str | None,
    groups: frozenset[str],
    powers: Powers,
    mask: int,
    any_of: bool = False,
) -> bool:
    """Storm's hasPermissions (every bit of `mask`) or hasAnyPermissions (`any_of`)."""
    if principal is not None:
        if principal in powers.admins or groups & powers.admin_groups:
            return True
        if mask == READ and principal in powers.supervisors:
            return True
    granted = 0
    for entry in meta.acl:
        if entry.type == OTHER or (principal is not None and entry.name == principal):
            granted |= entry.access
    return bool(granted & mask) if any_of else granted & mask == mask


def names(mask: int) -> str:
    named = ((READ, "READ"), (WRITE, "WRITE"), (ADMIN, "ADMIN"))
    return "+".join(name for bit, name in named if mask & bit)


def with_replication(meta: BlobMeta, replication: int) -> BlobMeta:
    return replace(meta, replication=replication)
