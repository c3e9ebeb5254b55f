"""Storm 2's blobstore calls, served for the NimbusHandler, backed by nimbus's SQL store
(nimbus/blobs/blob_store.py), with a topology's code package readable under Storm's key names
(nimbus/blobs/code_blobs.py).

Every call is first a user command for nimbus.authorizer (nimbus.users may narrow who uses
the blobstore at all; nimbus.supervisor.users may use the reads), then judged by the blob's
own ACL as Storm judges it (nimbus/blobs/blob_access.py): create needs nothing more, update and
delete WRITE, setBlobMeta ADMIN, reads READ, the meta any right. listBlobs lists only the
keys the caller may see (Storm lists every key).

Writes need the leader: a standby refuses them with IllegalStateException naming it (a
TApplicationException where Storm declares none, and on deleteBlob, whose
IllegalStateException Storm 1.x's IDL does not declare: a Storm 1 client would read it as a
normal return). The SQL store is shared, so any nimbus
answers reads. Uploads go through the inbox, the same as code uploads, with its owners,
quotas and expiry. A blob counts against the per-user quotas of its owner, who created it
(nimbus/blobs/user_quotas.py): an update by another writer counts against the owner. A quota's
refusal is a TApplicationException naming the key and the usage (Storm declares no quota
error on these calls).
"""

from __future__ import annotations

import time
from pathlib import Path
from typing import Any, BinaryIO

from thriftpy2.thrift import TApplicationException

from squall import thrift_api as T
from squall.nimbus.blobs.blob_access import (
    REPLICATION,
    BlobAccess,
    code_meta,
    meta_in,
    meta_out,
    refused,
)
from squall.nimbus.blobs.blob_acl import (
    ADMIN,
    ALL,
    READ,
    WRITE,
    BadBlobRequest,
    BlobMeta,
    code_package_key,
    key_problem,
    normalized,
    with_replication,
)
from squall.nimbus.blobs.blob_sessions import BlobDownload, BlobSessions, PendingUpload
from squall.nimbus.blobs.blob_store import BlobExists, BlobStore, NoBlob
from squall.nimbus.blobs.code_blobs import code_blob_keys, code_chunk
from squall.nimbus.blobs.user_quotas import BlobQuota, bytes_problem, create_problem
from squall.nimbus.controller import Controller
from squall.nimbus.rpc.call_authorizer import CallAuthorizer
from squall.nimbus.rpc.operations import op
from squall.nimbus.rpc.thrift_call import undeclared_message

CHUNK_BYTES = 300 * 1024
LIST_PAGE = 100  # keys per listBlobs answer, as Storm's


class BlobCalls:
    CALLS = (
        "beginCreateBlob",
        "beginUpdateBlob",
        "uploadBlobChunk",
        "finishBlobUpload",
        "cancelBlobUpload",
        "setBlobMeta",
        "deleteBlob",
        "updateBlobReplication",
        "createStateInZookeeper",
        "getBlobMeta",
        "beginBlobDownload",
        "downloadBlobChunk",
        "listBlobs",
        "getBlobReplication",
        "isRemoteBlobExists",
    )

    def __init__(self, controller: Controller, conf: dict[str, Any], auth: CallAuthorizer):
        """The blobs table lives in nimbus's store (controller.store)."""
        self.c = controller
        self._authorize = auth.authorize  # operations.op judges each call by it
        self.blob_store = BlobStore(controller.store.engine)
        self.access = BlobAccess(controller, self.blob_store, auth)
        self.blob_sessions = BlobSessions(
            max_downloads=conf["nimbus.blob.max.open.downloads"],
            max_idle=conf["nimbus.file.copy.expiration.secs"],
        )
        self.blob_quota = BlobQuota.from_conf(conf)

    def _begin_upload(self, pending: PendingUpload) -> str:
        location = self.c.requests.begin_upload(self.access.principal())
        self.blob_sessions.add_upload(location, pending, self.c.inbox.locations())
        return location

    @op("beginCreateBlob")
    def beginCreateBlob(self, key, meta):
        self.access.lead()
        self.access.valid(key)
        if code_package_key(key):
            raise T.AuthorizationException(msg=f"{key}: keys ending so are topology code packages")
        try:
            wanted = meta_in(meta)
        except BadBlobRequest as exc:
            raise refused(f"beginCreateBlob: {exc}") from exc
        wanted = BlobMeta(normalized(wanted.acl, self.access.principal(), ALL), wanted.replication)
        if self.blob_store.get(key) is not None:
            raise T.KeyAlreadyExistsException(msg=f"blob {key!r} exists")
        self._check_count("beginCreateBlob", self.access.principal())
        return self._begin_upload(PendingUpload(key, wanted))

    def _check_count(self, api: str, owner: str | None) -> None:
        mine, total = self.blob_store.usage(owner), self.blob_store.count()
        problem = create_problem(owner, mine, total, self.blob_quota, self.access.exempt(owner))
        if problem:
            raise refused(f"{api}: {problem}")

    def _check_bytes(self, api: str, pending: PendingUpload, size: int) -> None:
        """Whether the blob's owner may hold it at `size` bytes: the creator for a new blob,
        for an update the blob's owner (a writer's update counts against the owner)."""
        owner, replaced = self.access.principal(), 0
        if pending.meta is None:
            blob = self.access.blob(pending.key, WRITE)
            owner, replaced = blob.owner, blob.size
        mine = self.blob_store.usage(owner)
        exempt = self.access.exempt(owner)
        problem = bytes_problem(owner, mine, replaced, size, self.blob_quota, exempt)
        if problem:
            raise refused(f"{api}: {problem}")

    @op("beginUpdateBlob")
    def beginUpdateBlob(self, key):
        self.access.lead()
        self.access.blob(key, WRITE)
        return self._begin_upload(PendingUpload(key, None))

    @op("uploadBlobChunk")
    def uploadBlobChunk(self, session, chunk):
        principal = self.access.principal()
        self.c.inbox.check_owner(session, principal)
        pending = self.blob_sessions.upload(session)
        try:
            self._check_bytes(
                "uploadBlobChunk", pending, self.c.inbox.size(session) + len(chunk or b"")
            )
        except (TApplicationException, T.AuthorizationException, T.KeyNotFoundException):
            self._cancel(session)
            raise
        self.c.inbox.append(session, chunk or b"", self.c.clock(), principal)

    @op("finishBlobUpload")
    def finishBlobUpload(self, session):
        """The upload's file is copied into the store a chunk at a time (never read whole),
        under its owner's lock, after the owner's quotas are checked again."""
        self.access.lead()
        pending = self.blob_sessions.upload(session)
        principal = self.access.principal()
        self.c.inbox.finish(session, self.c.clock(), principal)
        path: Path = self.c.inbox.take(session)
        self.blob_sessions.end_upload(session)
        try:
            owner = principal
            if pending.meta is None:  # the ACL may have changed meanwhile
                owner = self.access.blob(pending.key, WRITE).owner
            with self.blob_sessions.owner_lock(owner), path.open("rb") as data:
                self._store(pending, principal, data, path.stat().st_size)
        except BlobExists as exc:
            raise T.KeyAlreadyExistsException(msg=f"blob {pending.key!r} exists") from exc
        except NoBlob as exc:
            raise T.KeyNotFoundException(msg=f"blob {pending.key!r} was deleted") from exc
        finally:
            path.unlink(missing_ok=True)

    def _store(
        self, pending: PendingUpload, principal: str | None, data: BinaryIO, size: int
    ) -> None:
        self._check_bytes("finishBlobUpload", pending, size)
        now_ms = int(time.time() * 1000)
        if pending.meta is not None:
            self._check_count("finishBlobUpload", principal)
            self.blob_store.create(pending.key, pending.meta, data, now_ms, owner=principal)
        else:
            self.blob_store.replace_data(pending.key, data, now_ms)

    @op("cancelBlobUpload")
    def cancelBlobUpload(self, session):
        self.blob_sessions.upload(session)
        self.c.inbox.check_owner(session, self.access.principal())
        self._cancel(session)

    def _cancel(self, session: str) -> None:
        self.c.inbox.discard(session)
        self.blob_sessions.end_upload(session)

    @op("setBlobMeta")
    def setBlobMeta(self, key, meta):
        self.access.lead()
        blob = self.access.blob(key, ADMIN)
        try:
            wanted = meta_in(meta)
        except BadBlobRequest as exc:
            raise refused(f"setBlobMeta: {exc}") from exc
        acl = normalized(wanted.acl, self.access.principal(), ADMIN)
        replication = wanted.replication if wanted.replication else blob.meta.replication
        try:
            self.blob_store.set_meta(key, BlobMeta(acl, replication))
        except NoBlob as exc:
            raise T.KeyNotFoundException(msg=f"no blob {key!r}") from exc

    @op("deleteBlob")
    def deleteBlob(self, key):
        try:
            self.access.lead()
        except T.IllegalStateException as exc:
            message = undeclared_message("deleteBlob", exc)
            raise TApplicationException(TApplicationException.INTERNAL_ERROR, message) from exc
        self.access.blob(key, WRITE)
        try:
            self.blob_store.delete(key)
        except NoBlob as exc:
            raise T.KeyNotFoundException(msg=f"no blob {key!r}") from exc

    @op("updateBlobReplication")
    def updateBlobReplication(self, key, replication):
        """Records the replication asked for; answers the effective one, the store's."""
        self.access.lead()
        blob = self.access.blob(key, WRITE)
        if replication is None or replication < 1:
            raise refused(f"updateBlobReplication: replication must be at least 1: {replication}")
        self.blob_store.set_meta(key, with_replication(blob.meta, replication))
        return REPLICATION

    @op("createStateInZookeeper")
    def createStateInZookeeper(self, key):
        """Nothing to do: Storm records which nimbus holds which blob version in ZooKeeper so
        that nimbuses can sync their local copies; squall's blobs live in the one SQL store
        all nimbuses share, so there are no copies to track."""
        return None

    # --- reads ---

    @op("getBlobMeta")
    def getBlobMeta(self, key):
        self.access.valid(key)
        code = self.access.code_blob(key)
        if code is not None:
            return code_meta(code)
        blob = self.access.blob(key, READ | WRITE | ADMIN, any_of=True)
        return meta_out(blob.meta, blob.version)

    @op("beginBlobDownload")
    def beginBlobDownload(self, key):
        self.access.valid(key)
        code = self.access.code_blob(key)
        blob = code or self.access.blob(key, READ)
        download = BlobDownload(key, blob.version, self.access.principal(), self.c.clock(), code)
        session = self.blob_sessions.add_download(download)
        return T.BeginDownloadResult(version=blob.version, session=session, data_size=blob.size)

    @op("downloadBlobChunk")
    def downloadBlobChunk(self, session):
        d = self.blob_sessions.download(session, self.access.principal(), self.c.clock())
        if d.code is not None:
            chunk = code_chunk(self.c.store, d.code, d.offset, CHUNK_BYTES)
        else:
            try:
                chunk = self.blob_store.chunk(d.key, d.version, d.offset, CHUNK_BYTES)
            except NoBlob:
                chunk = None
        if chunk is None:
            self.blob_sessions.advance(session, 0)
            raise T.KeyNotFoundException(msg=f"blob {d.key!r} changed or was deleted meanwhile")
        self.blob_sessions.advance(session, len(chunk))
        return chunk

    @op("listBlobs")
    def listBlobs(self, session):
        """The keys the caller may see, LIST_PAGE at a time. The session is the last key
        answered, so a listing holds nothing on nimbus; an empty page ends it."""
        after = session or ""
        keys: list[str] = []
        for blob in self.blob_store.entries(after):
            if self.access.permits(blob.meta, READ | WRITE | ADMIN, any_of=True):
                keys.append(blob.key)
            if len(keys) >= LIST_PAGE:
                break
        readable = set()
        for tid in self.c.store.topology_ids():
            stored = self.c.store.topology(tid)
            if stored is not None and self.access.reads_code(stored.conf):
                readable.add(tid)
        keys += [k for k in code_blob_keys(readable) if k > after]
        page = sorted(keys)[:LIST_PAGE]
        return T.ListBlobsResult(keys=page, session=page[-1] if page else after)

    @op("getBlobReplication")
    def getBlobReplication(self, key):
        self.access.valid(key)
        if self.access.code_blob(key) is None:
            self.access.blob(key, READ | WRITE | ADMIN, any_of=True)
        return REPLICATION

    @op("isRemoteBlobExists")
    def isRemoteBlobExists(self, blobKey):  # noqa: N803 - Storm's argument name
        if key_problem(blobKey):
            return False
        try:
            if self.access.code_blob(blobKey) is None:
                self.access.blob(blobKey, READ | WRITE | ADMIN, any_of=True)
        except T.KeyNotFoundException:
            return False
        return True
