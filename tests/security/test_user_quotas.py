"""Per-user quotas (issue 36 item 3) on a live nimbus over Thrift and TLS, with a second
user as the one who overdoes it: blobs, blob bytes, open uploads and topologies are counted
per user, so a user at a quota is refused (naming the key and their usage) while the other
user keeps working, and the admin is never held up by either. A large blob round-trips
exactly and is stored as bounded chunk rows, never as one value."""

from __future__ import annotations

import random
from pathlib import Path

import pytest
from sqlalchemy import create_engine, func, select
from thriftpy2.thrift import TApplicationException

from squall import thrift_api as T
from squall.local import LocalCluster, wait_for
from squall.nimbus.blobs.blob_store import STORE_CHUNK, blob_chunks
from squall.security.certificates import issue
from squall.submit import submit_file

TINY = Path(__file__).parents[1] / "integration" / "topologies" / "tiny.py"
PER_USER = 3
TOTAL = 8
USER_BYTES = 5 * 1024 * 1024
BLOB = 3 * 1024 * 1024  # one fits under USER_BYTES, two do not
UPLOADS = 2
CONF = {
    "nimbus.blob.max.count": TOTAL,
    "nimbus.blob.max.count.per.user": PER_USER,
    "nimbus.blob.max.bytes.per.user": USER_BYTES,
    "nimbus.blob.max.bytes": 8 * 1024 * 1024,
    "nimbus.upload.max.open": UPLOADS,
    "nimbus.upload.max.open.total": UPLOADS + 1,
    "nimbus.topologies.max.per.user": 1,
}


@pytest.fixture(scope="module")
def cluster(tmp_path_factory):
    directory = tmp_path_factory.mktemp("quotas")
    conf = {**CONF, "nimbus.store.url": f"sqlite:///{directory / 'store.db'}"}
    with LocalCluster(directory, supervisors=0, conf=conf) as c:
        for name in ("alice", "bob", "carol"):
            issue(c.base_conf_full(), name)
        yield c


@pytest.fixture(autouse=True)
def no_blobs_left(cluster):
    """Each test starts from an empty blobstore; the admin may delete any blob."""
    yield
    with cluster.client() as admin:
        for key in admin.listBlobs("").keys:
            if not key.endswith((".jar", ".ser")):
                admin.deleteBlob(key)


def acl():
    return T.SettableBlobMeta(acl=[], replication_factor=None)


def upload(client, session: str, data: bytes, chunk: int = 256 * 1024) -> None:
    for offset in range(0, len(data), chunk):
        client.uploadBlobChunk(session, data[offset : offset + chunk])
    client.finishBlobUpload(session)


def create(client, key: str, data: bytes = b"x", chunk: int = 256 * 1024) -> None:
    upload(client, client.beginCreateBlob(key, acl()), data, chunk)


def download(client, key: str) -> bytes:
    begun = client.beginBlobDownload(key)
    parts = []
    while chunk := client.downloadBlobChunk(begun.session):
        parts.append(chunk)
    return b"".join(parts)


def test_a_users_blob_count_binds_only_that_user(cluster):
    with cluster.client("alice") as alice, cluster.client("bob") as bob:
        for i in range(PER_USER):
            create(bob, f"bob-{i}")
        with pytest.raises(TApplicationException, match="'bob' hold 3 blobs") as refused:
            create(bob, "bob-more")
        assert "nimbus.blob.max.count.per.user is 3" in str(refused.value)
        for i in range(PER_USER):  # bob at his quota does not block alice
            create(alice, f"alice-{i}")
        with pytest.raises(TApplicationException, match="nimbus.blob.max.count.per.user"):
            create(alice, "alice-more")
        bob.deleteBlob("bob-0")  # bob keeps working: freeing one lets him create one
        create(bob, "bob-again")
        assert download(bob, "bob-again") == b"x"
    with cluster.client() as admin:  # at 6 of the users' blobs, the admin is not counted
        create(admin, "admin-0")


def test_the_overall_count_binds_users_but_never_the_admin(cluster):
    with cluster.client("alice") as alice, cluster.client("bob") as bob:
        for i in range(PER_USER):
            create(alice, f"alice-{i}")
            create(bob, f"bob-{i}")
    with cluster.client("carol") as carol:
        create(carol, "carol-0")
        create(carol, "carol-1")  # 8 blobs: nimbus.blob.max.count
        with pytest.raises(TApplicationException, match="nimbus.blob.max.count is 8"):
            create(carol, "carol-2")
    with cluster.client() as admin:
        create(admin, "admin-0")
        create(admin, "admin-1")
        assert download(admin, "admin-1") == b"x"


def test_a_users_blob_bytes_bind_only_that_user(cluster):
    data = random.Random(5).randbytes(BLOB)
    with cluster.client("alice") as alice, cluster.client("bob") as bob:
        create(alice, "alice-big", data)
        session = alice.beginCreateBlob("alice-big-2", acl())
        with pytest.raises(TApplicationException, match="nimbus.blob.max.bytes.per.user") as e:
            for offset in range(0, BLOB, 256 * 1024):
                alice.uploadBlobChunk(session, data[offset : offset + 256 * 1024])
        assert f"'alice' hold {BLOB} bytes in 1 blobs" in str(e.value)
        with pytest.raises(T.AuthorizationException):  # the refused upload is gone
            alice.uploadBlobChunk(session, b"x")
        assert not alice.isRemoteBlobExists("alice-big-2")
        create(bob, "bob-big", data)  # alice at her quota does not block bob
        # alice keeps working: an update replaces her blob's bytes, it does not add to them
        bigger = data + data[: USER_BYTES - 1 - BLOB]
        upload(alice, alice.beginUpdateBlob("alice-big"), bigger)
        assert download(alice, "alice-big") == bigger
    with cluster.client() as admin:
        create(admin, "admin-big", data)
        create(admin, "admin-big-2", data)


def test_a_users_open_uploads_bind_only_that_user(cluster):
    with cluster.client("alice") as alice, cluster.client("bob") as bob:
        mine = [alice.beginCreateBlob(f"open-{i}", acl()) for i in range(UPLOADS)]
        with pytest.raises(TApplicationException, match="'alice' already hold 2 open uploads"):
            alice.beginCreateBlob("open-more", acl())
        theirs = bob.beginCreateBlob("bob-open", acl())  # now at nimbus.upload.max.open.total
        with cluster.client() as admin:
            create(admin, "admin-past-the-total")
        for session in mine:
            alice.cancelBlobUpload(session)
        bob.cancelBlobUpload(theirs)
        create(alice, "after-cancelling")


def test_a_users_topologies_bind_only_that_user(cluster):
    conf = cluster.client_conf()
    with cluster.client("alice") as alice, cluster.client("bob") as bob:
        submit_file(alice, TINY, conf, name="alice-1")
        with pytest.raises(T.InvalidTopologyException, match="nimbus.topologies.max.per.user"):
            submit_file(alice, TINY, conf, name="alice-2")
        submit_file(bob, TINY, conf, name="bob-1")
        with cluster.client() as admin:
            submit_file(admin, TINY, conf, name="admin-1")
            submit_file(admin, TINY, conf, name="admin-2")
        alice.killTopologyWithOpts("alice-1", T.KillOptions(wait_secs=0))
        wait_for(
            lambda: "alice-1" not in {t.name for t in alice.getClusterInfo().topologies},
            60,
            "alice-1 to be removed",
        )
        submit_file(alice, TINY, conf, name="alice-2")  # alice keeps working
        with cluster.client() as admin:
            for name in ("alice-2", "bob-1", "admin-1", "admin-2"):
                admin.killTopologyWithOpts(name, T.KillOptions(wait_secs=0))


def test_a_large_blob_round_trips_exactly_as_bounded_chunk_rows(cluster):
    data = random.Random(9).randbytes(3 * STORE_CHUNK + 4321)
    with cluster.client() as admin:
        create(admin, "large", data, chunk=1000 * 1000)
        assert download(admin, "large") == data
    engine = create_engine(cluster.base_conf_full()["nimbus.store.url"])
    try:
        with engine.connect() as db:
            rows = db.execute(
                select(func.length(blob_chunks.c.data))
                .where(blob_chunks.c.key == "large")
                .order_by(blob_chunks.c.seq)
            ).scalars()
            assert list(rows) == [STORE_CHUNK] * 3 + [4321]
    finally:
        engine.dispose()
