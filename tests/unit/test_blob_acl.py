"""Blob ACLs as Storm's BlobStoreAclHandler decides them, Storm's key rules, and the
bookkeeping of blob sessions: pure decisions over plain data."""

import pytest

from squall import thrift_api as T
from squall.nimbus.blobs.blob_acl import (
    ADMIN,
    ALL,
    OTHER,
    READ,
    USER,
    WRITE,
    Ace,
    BadBlobRequest,
    BlobMeta,
    Powers,
    allowed,
    check_acl,
    code_package_key,
    key_problem,
    names,
    normalized,
)
from squall.nimbus.blobs.blob_sessions import BlobDownload, BlobSessions, PendingUpload
from squall.nimbus.blobs.blob_store import next_version

POWERS = Powers(
    admins=frozenset({"admin"}),
    admin_groups=frozenset({"wheel"}),
    supervisors=frozenset({"supervisor"}),
)
NONE: frozenset[str] = frozenset()


def test_the_creator_gets_every_right_whatever_the_acl_says():
    acl = normalized([Ace(USER, "alice", READ), Ace(USER, "bob", READ)], "alice")
    assert acl == (Ace(USER, "bob", READ), Ace(USER, "alice", ALL))
    assert normalized([], "alice") == (Ace(USER, "alice", ALL),)


def test_a_nameless_user_entry_is_the_creator_and_empty_world_entries_go():
    acl = normalized([Ace(USER, None, READ), Ace(OTHER, None, 0)], "alice")
    assert acl == (Ace(USER, "alice", ALL),)


def test_setting_meta_keeps_only_admin_for_the_setter():
    acl = normalized([Ace(USER, "bob", READ)], "alice", ADMIN)
    assert acl == (Ace(USER, "bob", READ), Ace(USER, "alice", ADMIN))


def test_an_anonymous_creator_makes_the_blob_world_writable():
    assert normalized([Ace(USER, None, READ)], None) == (Ace(OTHER, None, ALL),)
    assert normalized([Ace(OTHER, None, ALL)], None) == (Ace(OTHER, None, ALL),)


@pytest.mark.parametrize(
    ("principal", "groups", "mask", "expected"),
    [
        ("alice", NONE, ALL, True),
        ("bob", NONE, READ, True),
        ("bob", NONE, WRITE, False),
        ("bob", NONE, READ | WRITE, False),
        ("mallory", NONE, READ, False),
        ("admin", NONE, ALL, True),
        ("carol", frozenset({"wheel"}), ADMIN, True),
        ("supervisor", NONE, READ, True),
        ("supervisor", NONE, WRITE, False),
        (None, NONE, READ, False),
    ],
)
def test_rights_come_from_the_acl_or_nimbus_powers(principal, groups, mask, expected):
    meta = BlobMeta((Ace(USER, "alice", ALL), Ace(USER, "bob", READ)))
    assert allowed(meta, principal, groups, POWERS, mask) is expected


def test_any_of_needs_one_right_and_other_entries_grant_everyone():
    meta = BlobMeta((Ace(USER, "bob", WRITE), Ace(OTHER, None, READ)))
    assert allowed(meta, "bob", NONE, POWERS, READ | WRITE)  # READ from OTHER, WRITE as bob
    assert allowed(meta, "mallory", NONE, POWERS, READ | ADMIN, any_of=True)
    assert not allowed(meta, "mallory", NONE, POWERS, READ | ADMIN)


def test_acls_refuse_duplicates_bad_bits_and_too_many_entries():
    with pytest.raises(BadBlobRequest, match="more than once"):
        check_acl([Ace(USER, "bob", READ), Ace(USER, "bob", WRITE)])
    with pytest.raises(BadBlobRequest, match="mask"):
        check_acl([Ace(USER, "bob", 8)])
    with pytest.raises(BadBlobRequest, match="type"):
        check_acl([Ace(3, "bob", READ)])
    with pytest.raises(BadBlobRequest, match="at most"):
        check_acl([Ace(USER, f"u{i}", READ) for i in range(1000)])
    assert check_acl([Ace(OTHER, None, READ)]) == (Ace(OTHER, None, READ),)


@pytest.mark.parametrize("key", ["", ".", "..", "a/b", "../x", "x" * 256, "é", "a\nb"])
def test_keys_outside_storms_pattern_are_refused(key):
    assert key_problem(key) is not None


def test_storms_keys_are_accepted_and_code_package_keys_recognized():
    assert key_problem("my_blob-1.0 conf") is None
    assert code_package_key("t-1-2-stormjar.jar") == ("t-1-2", "-stormjar.jar")
    assert code_package_key("t-stormconf.ser") == ("t", "-stormconf.ser")
    assert code_package_key("-stormcode.ser") is None
    assert code_package_key("plain") is None
    assert names(READ | ADMIN) == "READ+ADMIN"


def test_a_version_always_grows():
    assert next_version(5, 3) == 6
    assert next_version(5, 1000) == 1000


def test_download_sessions_are_owned_capped_and_expire():
    sessions = BlobSessions(max_downloads=16, max_idle=10)  # two each at most
    first = sessions.add_download(BlobDownload("k", 1, "alice", last_used=0))
    for user in range(7):
        for t in (0, 1):
            sessions.add_download(BlobDownload("k", 1, f"user{user}", last_used=t))
    sessions.add_download(BlobDownload("k", 1, "alice", last_used=1))
    with pytest.raises(T.IllegalStateException, match="nimbus.blob.max.open.downloads"):
        sessions.add_download(BlobDownload("k", 1, "bob", last_used=2))
    with pytest.raises(T.AuthorizationException):
        sessions.download(first, "bob", now=3)
    assert sessions.download(first, "alice", now=3).offset == 0
    sessions.advance(first, 10)
    assert sessions.download(first, "alice", now=4).offset == 10
    sessions.advance(first, 0)  # read nothing more: complete
    with pytest.raises(T.AuthorizationException):
        sessions.download(first, "alice", now=5)
    later = sessions.add_download(BlobDownload("k", 1, "bob", last_used=100))  # idle ones go
    assert set(sessions.downloads) == {later}


def test_one_identity_past_its_share_of_downloads_ends_its_own_oldest():
    """A user who begins downloads without end churns their own, not everyone's."""
    sessions = BlobSessions(max_downloads=16, max_idle=1000)
    bobs = sessions.add_download(BlobDownload("k", 1, "bob", last_used=0))
    mallorys = [
        sessions.add_download(BlobDownload("k", 1, "mallory", last_used=t)) for t in range(50)
    ]
    assert set(sessions.downloads) == {bobs, *mallorys[-2:]}
    assert sessions.download(bobs, "bob", now=51).key == "k"
    anonymous = [sessions.add_download(BlobDownload("k", 1, None, last_used=60)) for _ in range(8)]
    assert set(anonymous) <= set(sessions.downloads)  # no identity: the whole cap, shared


def test_upload_sessions_are_forgotten_once_the_inbox_drops_them():
    sessions = BlobSessions(max_downloads=1, max_idle=1)
    sessions.add_upload("a", PendingUpload("k", None), live={"a"})
    sessions.add_upload("b", PendingUpload("k", None), live={"b"})  # "a" expired in the inbox
    assert set(sessions.uploads) == {"b"}
    with pytest.raises(T.AuthorizationException):
        sessions.upload("a")
