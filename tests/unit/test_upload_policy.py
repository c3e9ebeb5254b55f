"""Upload ownership and quotas: who may touch an upload, how many and how much one holds."""

from squall.nimbus.blobs.upload_policy import (
    OpenUpload,
    UploadQuota,
    append_problem,
    begin_problem,
    expired,
    may_use,
)

QUOTA = UploadQuota(max_open=2, max_open_bytes=100, max_open_total=3, max_bytes=60)


def test_only_the_owner_may_use_an_upload():
    assert may_use("alice", "alice")
    assert not may_use("alice", "bob")
    assert not may_use("alice", None)  # an anonymous client cannot take alice's upload
    assert not may_use(None, "bob")
    assert may_use(None, None)  # open mode: everyone is None, as in Storm


def test_begin_counts_the_identitys_open_uploads():
    held = [OpenUpload("alice", 0), OpenUpload("bob", 0)]
    assert begin_problem(held, "alice", QUOTA) is None
    problem = begin_problem([*held, OpenUpload("alice", 5)], "alice", QUOTA)
    assert problem and "nimbus.upload.max.open " in problem and "'alice'" in problem
    assert begin_problem([OpenUpload("alice", 0), OpenUpload("alice", 5)], "bob", QUOTA) is None


def test_begin_respects_the_global_cap():
    held = [OpenUpload("a", 0), OpenUpload("b", 0), OpenUpload("c", 0)]
    problem = begin_problem(held, "d", QUOTA)
    assert problem and "nimbus.upload.max.open.total" in problem


def test_an_admin_is_held_to_its_own_cap_not_the_global_one():
    quota = UploadQuota.from_conf(
        {
            "nimbus.upload.max.open": 2,
            "nimbus.upload.max.open.bytes": 100,
            "nimbus.upload.max.open.total": 3,
            "nimbus.upload.max.bytes": 60,
            "nimbus.admins": ["admin"],
        }
    )
    full = [OpenUpload("a", 0), OpenUpload("a", 0), OpenUpload("b", 0)]
    assert begin_problem(full, "admin", quota) is None  # other users filled the total
    assert "nimbus.upload.max.open.total" in (begin_problem(full, "c", quota) or "")
    mine = [*full, OpenUpload("admin", 0), OpenUpload("admin", 0)]
    assert "nimbus.upload.max.open " in (begin_problem(mine, "admin", quota) or "")


def test_append_checks_the_upload_and_the_identitys_bytes():
    mine = OpenUpload("alice", 50)
    held = [mine, OpenUpload("alice", 40), OpenUpload("bob", 60)]
    assert append_problem(held, mine, 10, QUOTA) is None  # 100 held: at the quota
    over_one = append_problem(held, mine, 11, QUOTA)
    assert over_one and "nimbus.upload.max.bytes" in over_one
    other = OpenUpload("alice", 40)
    over_all = append_problem(held, other, 11, QUOTA)
    assert over_all and "nimbus.upload.max.open.bytes" in over_all and "101" in over_all
    assert append_problem(held, OpenUpload("bob", 60), 0, QUOTA) is None


def test_uploads_expire_after_they_go_untouched():
    assert not expired(last_active=100.0, now=160.0, max_age=60)
    assert expired(last_active=100.0, now=160.5, max_age=60)
