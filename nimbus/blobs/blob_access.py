"""What every blobstore call checks first (nimbus/blobs/blob_calls.py has the calls): the key,
the leader, the caller's rights on a blob by its ACL (nimbus/blobs/blob_acl.py, Storm's
BlobStoreAclHandler), and for a topology's code package blob (nimbus/blobs/code_blobs.py) the
topology's own ACL. Kept apart from the calls so each module reads in one sitting.

With no authorizer (open mode) the ACLs are recorded but not enforced, as Storm's
storm.blobstore.acl.validation.enabled: false. A malformed key or ACL is a
TApplicationException (Storm's IllegalArgumentException), never a dropped connection.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
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
from squall.nimbus.blobs.blob_sessions import BlobSessions, PendingUpload
from squall.nimbus.blobs.blob_store import BlobStore, StoredBlob
from squall.nimbus.blobs.code_blobs import CodeBlob, code_blob
from squall.nimbus.blobs.user_quotas import BlobQuota
from squall.nimbus.rpc import request_context
from squall.nimbus.rpc.authorizer import NOOP, Acl, UnixGroups

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
    """Mixed into NimbusHandler, whose attributes these are (and UiReads' `_may`)."""

    c: Any  # the Controller
    conf: dict[str, Any]
    authorizer: str
    acl: Acl
    groups: UnixGroups
    _may: Callable[[str | None, str, Mapping[str, Any]], bool]

    def _init_blobs(self) -> None:
        """Called by NimbusHandler.__init__: the blobs table lives in nimbus's store."""
        self.blob_store = BlobStore(self.c.store.engine)
        self.blob_sessions = BlobSessions(
            max_downloads=self.conf["nimbus.blob.max.open.downloads"],
            max_idle=self.conf["nimbus.file.copy.expiration.secs"],
        )
        self.blob_powers = Powers(self.acl.admins, self.acl.admin_groups, self.acl.supervisors)
        self.blob_quota = BlobQuota.from_conf(self.conf)

    # --- checks ---

    def _principal(self) -> str | None:
        return request_context.current().principal

    def _lead(self) -> None:
        if not self.c.leading:
            raise self.c._not_leader()

    def _exempt(self, owner: str | None) -> bool:
        """nimbus.admins (and members of nimbus.admins.groups) have no per-user quota."""
        if owner is None:
            return False
        groups = self.groups(owner) if self.acl.admin_groups else frozenset()
        return owner in self.acl.admins or bool(groups & self.acl.admin_groups)

    def _valid(self, key: str) -> None:
        problem = key_problem(key)
        if problem:
            raise refused(problem)

    def _permits(self, meta: BlobMeta, mask: int, any_of: bool = False) -> bool:
        if self.authorizer == NOOP:
            return True
        principal = self._principal()
        groups = self.groups(principal) if principal is not None else frozenset()
        return allowed(meta, principal, groups, self.blob_powers, mask, any_of)

    def _blob(self, key: str, mask: int, any_of: bool = False) -> StoredBlob:
        """The stored blob if the caller has `mask` on it; KeyNotFound or Authorization."""
        self._valid(key)
        if code_package_key(key):
            raise T.IllegalStateException(msg=f"{key} is part of a topology's code package")
        blob = self.blob_store.get(key)
        if blob is None:
            raise T.KeyNotFoundException(msg=f"no blob {key!r}")
        if not self._permits(blob.meta, mask, any_of):
            who = self._principal() or "an unauthenticated client"
            raise T.AuthorizationException(msg=f"{who} does not have {names(mask)} on {key}")
        return blob

    def _code_blob(self, key: str) -> CodeBlob | None:
        """The code package blob `key` names, if the caller may read its topology."""
        named = code_package_key(key)
        if named is None:
            return None
        blob = code_blob(self.c.store, *named)
        if blob is None:
            raise T.KeyNotFoundException(msg=f"no blob {key!r}")
        if not self._reads_code(blob.conf):
            who = self._principal() or "an unauthenticated client"
            raise T.AuthorizationException(msg=f"{who} may not read topology {blob.topology}")
        return blob

    def _reads_code(self, conf: dict[str, Any]) -> bool:
        principal = self._principal()
        return self._may(principal, "getTopology", conf) or self._may(
            principal, "fileDownload", conf
        )

    def _code_meta(self, blob: CodeBlob) -> Any:
        readers = {str(blob.conf.get("topology.submitter.principal") or "")}
        for key in ("topology.users", "topology.readonly.users"):
            value = blob.conf.get(key) or []
            readers |= {value} if isinstance(value, str) else {str(v) for v in value}
        acl = tuple(Ace(USER, name, READ) for name in sorted(readers - {""}))
        return meta_out(BlobMeta(acl, REPLICATION), blob.version)

    def _begin_upload(self, pending: PendingUpload) -> str:
        location = self.c.begin_upload(self._principal())
        self.blob_sessions.add_upload(location, pending, self.c.inbox.locations())
        return location
