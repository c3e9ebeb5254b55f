"""Partition ranges follow the seed's consumer rebalancing: sorted, contiguous, even."""

from hypothesis import given
from hypothesis import strategies as st

from squall.sources import partition_range


def test_seed_style_ranges():
    parts = [f"p{i}" for i in range(5)]
    assert [partition_range(parts, i, 2) for i in range(2)] == [
        ["p0", "p1", "p2"],
        ["p3", "p4"],
    ]
    assert partition_range(parts, 3, 8) == ["p3"] and partition_range(parts, 6, 8) == []


@given(st.integers(0, 40), st.integers(1, 12))
def test_every_partition_has_exactly_one_task(n, tasks):
    parts = [f"p{i:02d}" for i in range(n)]
    dealt = [p for i in range(tasks) for p in partition_range(parts, i, tasks)]
    assert dealt == parts
    sizes = [len(partition_range(parts, i, tasks)) for i in range(tasks)]
    assert max(sizes) - min(sizes) <= 1
