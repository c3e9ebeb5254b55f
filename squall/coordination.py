"""What a task may use to coordinate with the other tasks of its component: ownership of
partitions and their stored positions, by (group, source, partition). A component gets one in
`TaskContext.coordination` instead of a ZooKeeper client: `ZkCoordination` in a worker,
`InMemoryCoordination` (squall/recipes/in_memory.py) in one process, without ZooKeeper."""

from __future__ import annotations

from typing import Protocol

from kazoo.client import KazooClient

from squall.recipes.offset_store import OffsetStore, ZkOffsetStore
from squall.recipes.owner import PartitionOwner, ZkPartitionOwner, owner_token
from squall.zk.layout import ZkLayout


class SourceCoordination(Protocol):
    def owner(self, group: str, source: str, partition: str) -> PartitionOwner:
        """A new claim on the partition, WAITING until its first `poll`."""
        ...  # pragma: no cover

    def offsets(self, group: str, source: str, partition: str) -> OffsetStore:
        """The partition's stored position."""
        ...  # pragma: no cover


class ZkCoordination:
    """The seed's consumer layout under the cluster's root, for task `task_id`."""

    def __init__(self, zk: KazooClient, layout: ZkLayout, task_id: int) -> None:
        self.zk, self.layout, self.task_id = zk, layout, task_id

    def owner(self, group: str, source: str, partition: str) -> PartitionOwner:
        path = self.layout.consumer_owner(group, source, partition)
        return ZkPartitionOwner(self.zk, path, owner_token(self.task_id))

    def offsets(self, group: str, source: str, partition: str) -> OffsetStore:
        return ZkOffsetStore(
            self.zk,
            self.layout.consumer_offset(group, source, partition),
            self.layout.consumer_cuts(group, source, partition),
        )
