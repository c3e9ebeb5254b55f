"""Storm 2's blobstore calls (issue #17) over real Thrift and TLS against a local cluster with
two nimbuses sharing one SQL store: bytes round-trip in chunks, versions change with the
data, each blob's ACL is enforced as Storm's BlobStoreAclHandler enforces it, a topology's
code package is readable under Storm's key names and read-only, a standby refuses writes
naming the leader, and the limits refuse what is too much."""

import contextlib
import json
import random

import pytest
from thriftpy2.thrift import TApplicationException

from squall import thrift_api as T
from squall.client import nimbus_client
from squall.local import LocalCluster, topology_id
from squall.security.certificates import issue
from squall.submit import submit_file

from .conftest import TOPOLOGIES

USER, OTHER = T.AccessControlType.USER, T.AccessControlType.OTHER
READ, WRITE, ADMIN = 1, 2, 4
MAX_BYTES = 2 * 1024 * 1024
MAX_OPEN = 4
DATA = random.Random(17).randbytes(1024 * 1024 + 123)  # four 300 KiB download chunks


@pytest.fixture(scope="module")
def cluster(tmp_path_factory):
    conf = {"nimbus.blob.max.bytes": MAX_BYTES, "nimbus.upload.max.open": MAX_OPEN}
    directory = tmp_path_factory.mktemp("blobs")
    with LocalCluster(directory, supervisors=0, nimbuses=2, conf=conf) as c:
        for name in ("alice", "bob", "mallory", "carol"):
            issue(c.base_conf_full(), name)
        yield c


@contextlib.contextmanager
def standby(cluster, identity=None):
    _, leader = cluster.leader()
    port = next(p for p in cluster.nimbus_ports if p != leader)
    with nimbus_client("127.0.0.1", port, conf=cluster.client_conf(), identity=identity) as c:
        yield c


def meta(*entries, replication=None):
    acl = [T.AccessControl(type=t, name=n, access=a) for t, n, a in entries]
    return T.SettableBlobMeta(acl=acl, replication_factor=replication)


def upload(client, session, data, chunk=256 * 1024):
    for offset in range(0, len(data), chunk):
        client.uploadBlobChunk(session, data[offset : offset + chunk])
    client.finishBlobUpload(session)


def create(client, key, data, settable=None):
    upload(client, client.beginCreateBlob(key, settable or meta()), data)


def download(client, key):
    """(BeginDownloadResult, bytes, number of non-empty chunks)."""
    begun = client.beginBlobDownload(key)
    parts = []
    for _ in range(1000):
        chunk = client.downloadBlobChunk(begun.session)
        if not chunk:
            return begun, b"".join(parts), len(parts)
        parts.append(chunk)
    raise AssertionError(f"{key}: download never ended")


def every_key(client):
    keys, session = [], ""
    for _ in range(100):
        page = client.listBlobs(session)
        if not page.keys:
            return keys
        keys += page.keys
        session = page.session
    raise AssertionError("listing never ended")


def test_bytes_round_trip_in_chunks_and_the_creator_holds_every_right(cluster):
    with cluster.client("alice") as alice:
        create(alice, "alice-data", DATA)
        begun, data, chunks = download(alice, "alice-data")
        assert data == DATA and chunks >= 4 and begun.data_size == len(DATA)
        readable = alice.getBlobMeta("alice-data")
        assert readable.version == begun.version
        assert [(a.type, a.name, a.access) for a in readable.settable.acl] == [
            (USER, "alice", READ | WRITE | ADMIN)
        ]
        assert alice.isRemoteBlobExists("alice-data")
        assert not alice.isRemoteBlobExists("nothing-here")


def test_an_update_changes_the_version_and_the_bytes(cluster):
    with cluster.client("alice") as alice:
        create(alice, "versions", b"one")
        first = alice.getBlobMeta("versions").version
        upload(alice, alice.beginUpdateBlob("versions"), b"two")
        second = alice.getBlobMeta("versions").version
        assert second > first
        assert download(alice, "versions")[1] == b"two"
        with pytest.raises(T.KeyNotFoundException):
            alice.beginUpdateBlob("never-made")


def test_a_duplicate_create_and_a_deleted_key_are_refused_as_storm_declares(cluster):
    with cluster.client("alice") as alice:
        create(alice, "short-lived", b"x")
        with pytest.raises(T.KeyAlreadyExistsException):
            alice.beginCreateBlob("short-lived", meta())
        alice.deleteBlob("short-lived")
        for call in (alice.getBlobMeta, alice.beginBlobDownload, alice.deleteBlob):
            with pytest.raises(T.KeyNotFoundException):
                call("short-lived")
        assert not alice.isRemoteBlobExists("short-lived")
        assert "short-lived" not in every_key(alice)


def test_listing_pages_and_shows_only_what_the_caller_may_see(cluster):
    with cluster.client() as admin:
        for i in range(120):
            create(admin, f"page-{i:03}", b"p")
        first = admin.listBlobs("")
        assert len(first.keys) == 100 and first.keys == sorted(first.keys)
        assert {f"page-{i:03}" for i in range(120)} <= set(every_key(admin))
    with cluster.client("bob") as bob:
        assert not any(key.startswith("page-") for key in every_key(bob))


def test_others_need_the_acl_and_read_is_not_write(cluster):
    with cluster.client("alice") as alice:
        create(alice, "shared", b"for bob", meta((USER, "bob", READ)))
    with cluster.client("bob") as bob:
        assert download(bob, "shared")[1] == b"for bob"
        assert "shared" in every_key(bob)
        for refused in (
            lambda: bob.beginUpdateBlob("shared"),
            lambda: bob.deleteBlob("shared"),
            lambda: bob.setBlobMeta("shared", meta((OTHER, None, READ | WRITE | ADMIN))),
            lambda: bob.updateBlobReplication("shared", 2),
        ):
            with pytest.raises(T.AuthorizationException, match="bob"):
                refused()
    with cluster.client("mallory") as mallory:
        with pytest.raises(T.AuthorizationException):
            mallory.getBlobMeta("shared")
        with pytest.raises(T.AuthorizationException):
            mallory.beginBlobDownload("shared")
        assert "shared" not in every_key(mallory)
    with cluster.client("alice") as alice:
        alice.setBlobMeta("shared", meta((USER, "bob", READ), (USER, "mallory", READ)))
    with cluster.client("mallory") as mallory:
        assert download(mallory, "shared")[1] == b"for bob"
    with cluster.client() as admin:  # nimbus.admins may do anything
        assert download(admin, "shared")[1] == b"for bob"


def test_a_topologys_code_package_is_read_only_blobs_under_storms_names(cluster):
    with cluster.client("alice") as alice:
        submit_file(alice, TOPOLOGIES / "tiny.py", cluster.client_conf(), name="coded")
        tid = topology_id(alice, "coded")
        keys = [f"{tid}-stormjar.jar", f"{tid}-stormconf.ser", f"{tid}-stormcode.ser"]
        assert set(keys) <= set(every_key(alice))
        begun, jar, _ = download(alice, keys[0])
        assert begun.data_size == len(jar)  # the jar's size and version, without loading it
        assert alice.getBlobMeta(keys[0]).version == begun.version > 0
        conf = json.loads(download(alice, keys[1])[1])
        assert conf["topology.submitter.principal"] == "alice"
        assert "numbers" in json.loads(download(alice, keys[2])[1])
        assert alice.getBlobMeta(keys[0]).settable.acl[0].name == "alice"
        with pytest.raises(T.IllegalStateException, match="code package"):
            alice.deleteBlob(keys[0])
        with pytest.raises(TApplicationException, match="code package"):
            alice.beginUpdateBlob(keys[1])
        with pytest.raises(T.AuthorizationException):
            alice.beginCreateBlob("other-1-1-stormjar.jar", meta())
    with cluster.client() as admin:  # the same bytes supervisors download
        session = admin.beginFileDownload(f"{tid}/code.tgz")
        code = b"".join(iter(lambda: admin.downloadChunk(session), b""))
        assert code == jar
    with cluster.client("bob") as bob:
        with pytest.raises(T.AuthorizationException):
            bob.getBlobMeta(keys[0])
        assert not set(keys) & set(every_key(bob))


def test_cancel_discards_and_only_the_owner_may_use_a_session(cluster):
    with cluster.client("alice") as alice, cluster.client("bob") as bob:
        session = alice.beginCreateBlob("cancelled", meta())
        alice.uploadBlobChunk(session, b"half")
        with pytest.raises(T.AuthorizationException):
            bob.uploadBlobChunk(session, b"mine now")
        with pytest.raises(T.AuthorizationException):
            bob.cancelBlobUpload(session)
        alice.cancelBlobUpload(session)
        with pytest.raises(T.AuthorizationException):
            alice.uploadBlobChunk(session, b"more")
        with pytest.raises(T.KeyNotFoundException):
            alice.getBlobMeta("cancelled")
        begun = alice.beginBlobDownload("alice-data")
        with pytest.raises(T.AuthorizationException):
            bob.downloadBlobChunk(begun.session)


def test_a_standby_refuses_writes_naming_the_leader_and_answers_reads(cluster):
    host, port = cluster.leader()
    with cluster.client("alice") as alice:
        create(alice, "on-both", b"same store")
    with standby(cluster, "alice") as replica:
        with pytest.raises(TApplicationException, match=f"{host}:{port}"):
            replica.beginCreateBlob("from-standby", meta())
        with pytest.raises(TApplicationException, match="not the leader"):
            replica.beginUpdateBlob("on-both")
        # not IllegalStateException: Storm 1.x's IDL does not declare it on deleteBlob
        with pytest.raises(TApplicationException, match="not the leader"):
            replica.deleteBlob("on-both")
        assert download(replica, "on-both")[1] == b"same store"
        assert "on-both" in every_key(replica)
    with cluster.client("alice") as alice:
        assert not alice.isRemoteBlobExists("from-standby")


def test_limits_refuse_what_is_too_much(cluster):
    with cluster.client("carol") as carol:
        session = carol.beginCreateBlob("too-big", meta())
        chunk = b"\0" * (512 * 1024)
        with pytest.raises(TApplicationException, match="nimbus.blob.max.bytes"):
            for _ in range(MAX_BYTES // len(chunk) + 1):
                carol.uploadBlobChunk(session, chunk)
        with pytest.raises(T.AuthorizationException):  # the session is gone
            carol.uploadBlobChunk(session, b"x")
        assert not carol.isRemoteBlobExists("too-big")
        sessions = [carol.beginCreateBlob(f"open-{i}", meta()) for i in range(MAX_OPEN)]
        with pytest.raises(TApplicationException, match="nimbus.upload.max.open"):
            carol.beginCreateBlob("one-more", meta())
        for session in sessions:
            carol.cancelBlobUpload(session)
        create(carol, "fits", b"after cancelling")


def test_bad_keys_and_acls_are_errors_on_a_live_connection(cluster):
    with cluster.client("alice") as alice:
        for key in ("../etc/passwd", "", "a/b", "x" * 300):
            with pytest.raises(TApplicationException):
                alice.beginCreateBlob(key, meta())
        twice = meta((USER, "bob", READ), (USER, "bob", WRITE))
        with pytest.raises(TApplicationException, match="more than once"):
            alice.beginCreateBlob("bad-acl", twice)
        with pytest.raises(TApplicationException, match="mask"):
            alice.beginCreateBlob("bad-acl", meta((USER, "bob", 99)))
        assert not alice.isRemoteBlobExists("../etc/passwd")
        assert alice.getLeader().isLeader


def test_replication_is_the_stores_and_the_request_is_recorded(cluster):
    with cluster.client("alice") as alice:
        create(alice, "replicated", b"r", meta(replication=2))
        assert alice.getBlobReplication("replicated") == 1
        assert alice.getBlobMeta("replicated").settable.replication_factor == 2
        assert alice.updateBlobReplication("replicated", 3) == 1
        assert alice.getBlobMeta("replicated").settable.replication_factor == 3
        alice.createStateInZookeeper("replicated")  # nothing to do, and no error
        with pytest.raises(T.KeyNotFoundException):
            alice.getBlobReplication("never-made")
