"""What every blobstore call checks first (nimbus/blobs/blob_calls.py has the calls): the key,
the leader, the caller's rights on a blob by its ACL (nimbus/blobs/blob_acl.py, Storm's
BlobStoreAclHandler), and for a topology's code package blob (nimbus/blobs/code_blobs.py) the
topology's own ACL. Kept apart from the calls so each module reads in one sitting.

With no authorizer (open mode) the ACLs are recorded but not enforced, as Storm's
storm.blobstore.acl.validation.enabled: false. A malformed key or ACL is a
TApplicationException (Storm's IllegalArgumentException), never a dropped connection.
"""

from __future__ import annotations

from typing import Any

from thriftpy2.thrift import TApplicationException

from squall import thrift_api as T
from squall.nimbus.blobs.blob_acl import (
    READ,
    USER,
    Ace,
    BadBlobRequest,
    BlobMeta,
    Powers,
    allowed,
    check_acl,
    code_package_key,
    key_problem,
    names,
)
from squall.nimbus.blobs.blob_store import BlobStore, StoredBlob
from squall.nimbus.blobs.code_blobs import CodeBlob, code_blob
from squall.nimbus.controller import Controller
from squall.nimbus.rpc import request_context
from squall.nimbus.rpc.call_authorizer import CallAuthorizer

REPLICATION = 1  # one shared SQL store: its own replication is the database's business


def refused(problem: str) -> TApplicationException:
    return TApplicationException(TApplicationException.UNKNOWN, problem)


def meta_in(meta: Any) -> BlobMeta:
    if meta is None or meta.acl is None:
        raise BadBlobRequest("SettableBlobMeta.acl is required")
    acl = check_acl(Ace(a.type, a.name, a.access) for a in meta.acl)
    replication = meta.replication_factor
    if replication is not None and replication < 1:
        raise BadBlobRequest(f"replication_factor must be at least 1, got {replication}")
    return BlobMeta(acl, replication)


def meta_out(meta: BlobMeta, version: int) -> Any:
    acl = [T.AccessControl(type=a.type, name=a.name, access=a.access) for a in meta.acl]
    settable = T.SettableBlobMeta(acl=acl, replication_factor=meta.replication)
    return T.ReadableBlobMeta(settable=settable, version=version)


class BlobAccess:
    """The checks, given to BlobCalls: who may do what to which blob."""

    def __init__(self, controller: Controller, blob_store: BlobStore, auth: CallAuthorizer):
        self.c = controller
        self.blob_store = blob_store
        self.auth = auth
        acl = auth.acl
        self.powers = Powers(acl.admins, acl.admin_groups, acl.supervisors)

    # --- checks ---

    def principal(self) -> str | None:
        return request_context.current().principal

    def lead(self) -> None:
        if not self.c.leading:
            raise self.c.not_leader()

    def exempt(self, owner: str | None) -> bool:
        """nimbus.admins (and members of nimbus.admins.groups) have no per-user quota."""
        if owner is None:
            return False
        acl = self.auth.acl
        groups = self.auth.groups(owner) if acl.admin_groups else frozenset()
        return owner in acl.admins or bool(groups & acl.admin_groups)

    def valid(self, key: str) -> None:
        problem = key_problem(key)
        if problem:
            raise refused(problem)

    def permits(self, meta: BlobMeta, mask: int, any_of: bool = False) -> bool:
        if not self.auth.enforcing:
            return True
        principal = self.principal()
        groups = self.auth.groups(principal) if principal is not None else frozenset()
        return allowed(meta, principal, groups, self.powers, mask, any_of)

    def blob(self, key: str, mask: int, any_of: bool = False) -> StoredBlob:
        """The stored blob if the caller has `mask` on it; KeyNotFound or Authorization."""
        self.valid(key)
        if code_package_key(key):
            raise T.IllegalStateException(msg=f"{key} is part of a topology's code package")
        blob = self.blob_store.get(key)
        if blob is None:
            raise T.KeyNotFoundException(msg=f"no blob {key!r}")
        if not self.permits(blob.meta, mask, any_of):
            who = self.principal() or "an unauthenticated client"
            raise T.AuthorizationException(msg=f"{who} does not have {names(mask)} on {key}")
        return blob

    def code_blob(self, key: str) -> CodeBlob | None:
        """The code package blob `key` names, if the caller may read its topology."""
        named = code_package_key(key)
        if named is None:
            return None
        blob = code_blob(self.c.store, *named)
        if blob is None:
            raise T.KeyNotFoundException(msg=f"no blob {key!r}")
        if not self.reads_code(blob.conf):
            who = self.principal() or "an unauthenticated client"
            raise T.AuthorizationException(msg=f"{who} may not read topology {blob.topology}")
        return blob

    def reads_code(self, conf: dict[str, Any]) -> bool:
        principal = self.principal()
        return self.auth.may(principal, "getTopology", conf) or self.auth.may(
            principal, "fileDownload", conf
        )


def code_meta(blob: CodeBlob) -> Any:
    """A code package blob's meta: readable by its topology's submitter and users."""
    readers = {str(blob.conf.get("topology.submitter.principal") or "")}
    for key in ("topology.users", "topology.readonly.users"):
        value = blob.conf.get(key) or []
        readers |= {value} if isinstance(value, str) else {str(v) for v in value}
    acl = tuple(Ace(USER, name, READ) for name in sorted(readers - {""}))
    return meta_out(BlobMeta(acl, REPLICATION), blob.version)
