"""Per-user quotas: a user at a quota is refused naming the key and the usage; another user
and an admin are not."""

from squall.nimbus.blobs.user_quotas import (
    BlobQuota,
    Usage,
    bytes_problem,
    create_problem,
    topology_problem,
)

QUOTA = BlobQuota(max_bytes=100, max_count=10, max_count_per_user=3, max_bytes_per_user=250)


def test_count_is_per_user_and_the_total_binds_everyone_but_admins():
    assert create_problem("alice", Usage(2, 0), 5, QUOTA, exempt=False) is None
    problem = create_problem("alice", Usage(3, 0), 5, QUOTA, exempt=False)
    assert problem and "nimbus.blob.max.count.per.user is 3" in problem
    assert "'alice' hold 3 blobs" in problem
    assert create_problem("bob", Usage(0, 0), 5, QUOTA, exempt=False) is None
    total = create_problem("bob", Usage(0, 0), 10, QUOTA, exempt=False)
    assert total and "nimbus.blob.max.count is 10" in total
    assert create_problem("admin", Usage(50, 0), 10, QUOTA, exempt=True) is None


def test_bytes_count_what_the_user_would_hold_after_the_write():
    assert bytes_problem("alice", Usage(2, 150), 0, 100, QUOTA, exempt=False) is None  # 250
    problem = bytes_problem("alice", Usage(2, 200), 0, 60, QUOTA, exempt=False)
    assert problem and "would hold 260 bytes" in problem
    assert "nimbus.blob.max.bytes.per.user is 250" in problem and "200 bytes in 2" in problem
    # an update replaces the blob's old bytes: 200 - 60 + 100 fits
    assert bytes_problem("alice", Usage(2, 200), 60, 100, QUOTA, exempt=False) is None
    assert bytes_problem("admin", Usage(9, 9999), 0, 100, QUOTA, exempt=True) is None
    one = bytes_problem("admin", Usage(0, 0), 0, 101, QUOTA, exempt=True)
    assert one and "nimbus.blob.max.bytes (100" in one  # one blob's limit binds admins too


def test_topologies_are_counted_by_owner():
    owners = ["alice", "bob", "alice"]
    problem = topology_problem("alice", owners, 2, exempt=False)
    assert (
        problem and "runs 2 topologies" in problem and "nimbus.topologies.max.per.user" in problem
    )
    assert topology_problem("bob", owners, 2, exempt=False) is None
    assert topology_problem("alice", owners, 2, exempt=True) is None


def test_from_conf_reads_the_keys():
    conf = {
        "nimbus.blob.max.bytes": 1,
        "nimbus.blob.max.count": 2,
        "nimbus.blob.max.count.per.user": 3,
        "nimbus.blob.max.bytes.per.user": 4,
    }
    assert BlobQuota.from_conf(conf) == BlobQuota(1, 2, 3, 4)
