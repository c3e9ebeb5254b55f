"""What nimbus knows, as immutable data: one TopologyModel per topology inside a NimbusModel,
and the ClusterSnapshot a placement decision is made against.

The controller thread replaces the model after each decision; readers on other threads take
whichever model is current, never a half-updated one.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field, replace
from typing import Any

from squall import thrift_api as T
from squall.log_config import LogConfig
from squall.nimbus.core import occupancy as occ
from squall.nimbus.core.heartbeats import HeartbeatCache
from squall.nimbus.scheduling.blacklist import Blacklist, BlacklistSettings
from squall.nimbus.scheduling.scheduling_priority import strategy_of
from squall.records import Assignment, Slot, StormBase, SupervisorInfo
from squall.structure import assign_task_ids

SCHEDULING_KEYS = (
    "topology.component.resources.onheap.memory.mb",
    "topology.component.cpu.pcore.percent",
    "topology.worker.max.heap.size.mb",
    "topology.priority",
    "resource.aware.scheduler.user.pools",
    "resource.aware.scheduler.priority.strategy",
    "storm.worker.min.cpu.pcore.percent",
    "topology.ras.workers.cap",
    "topology.scheduler.strategy",
)


@dataclass(frozen=True)
class NimbusSettings:
    """The cluster settings decisions depend on (from nimbus's conf)."""

    task_timeout: float
    task_launch: float
    message_timeout: int
    default_workers: int | None
    default_ackers: int | None
    spouts_track_trees: bool = True  # topology.spouts.track.trees (squall/tree_tracking.py)
    max_tasks: int = 1000  # nimbus.max.tasks: executors of one topology, ackers included
    zk_root: str = "/squall"  # storm.zookeeper.root: its length counts in every write
    # The cluster's topology.* scheduling defaults and resource.aware.scheduler.user.pools
    # (nimbus/scheduling/resource_conf.py reads them; a topology's own conf overrides the topology
    # keys).
    scheduling: Mapping[str, Any] = field(default_factory=dict)
    blacklist: BlacklistSettings = field(default_factory=BlacklistSettings)  # blacklist.scheduler.*
    # nimbus.slots.max.per.user: the slots one user's topologies may hold together (None: no
    # cap); nimbus.admins are exempt (nimbus/scheduling/cluster_scheduler.py enforces it)
    slots_per_user: int | None = None
    cap_exempt: frozenset[str] = frozenset()

    @staticmethod
    def from_conf(conf: Mapping[str, Any]) -> NimbusSettings:
        strategy_of(conf.get("resource.aware.scheduler.priority.strategy"))  # refused at start
        return NimbusSettings(
            task_timeout=conf["nimbus.task.timeout.secs"],
            task_launch=conf["nimbus.task.launch.secs"],
            message_timeout=conf["topology.message.timeout.secs"],
            default_workers=conf["topology.workers"],
            default_ackers=conf["topology.acker.executors"],
            spouts_track_trees=conf["topology.spouts.track.trees"],
            max_tasks=conf["nimbus.max.tasks"],
            zk_root=conf["storm.zookeeper.root"],
            scheduling={k: conf[k] for k in SCHEDULING_KEYS if k in conf},
            blacklist=BlacklistSettings.from_conf(conf),
            slots_per_user=slot_cap(conf.get(SLOTS_PER_USER)),
            cap_exempt=frozenset(str(u) for u in conf.get("nimbus.admins") or ()),
        )


SLOTS_PER_USER = "nimbus.slots.max.per.user"


def slot_cap(value: Any) -> int | None:
    """nimbus.slots.max.per.user: a whole number of at least 1, or None (no cap)."""
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, int) or value < 1:
        raise ValueError(f"{SLOTS_PER_USER} must be a whole number of at least 1 or null")
    return value


@dataclass(frozen=True)
class TopologyModel:
    id: str
    base: StormBase
    tasks: Mapping[int, str]
    assignment: Assignment | None = None
    heartbeats: HeartbeatCache = field(default_factory=HeartbeatCache)
    assigned_at: Mapping[int, float] = field(default_factory=dict)  # nimbus monotonic secs
    conf: Mapping[str, Any] = field(default_factory=dict)  # the effective topology conf
    log_config: LogConfig = field(default_factory=dict)  # as in /logconfigs/<id>
    sched_status: str = ""  # the scheduler's last word (Storm's TopologyInfo.sched_status)


@dataclass(frozen=True)
class NimbusModel:
    settings: NimbusSettings
    topologies: Mapping[str, TopologyModel] = field(default_factory=dict)
    supervisors: Mapping[str, SupervisorInfo] = field(default_factory=dict)
    epoch: int = 0
    leading: bool = False
    # The scheduler's input (requests, cluster) of the last reassignment round that changed
    # nothing: the scheduler is a pure function, so the same input again changes nothing
    # either and need not be scheduled (nimbus/core/reassign.py). A steady monitor round over
    # thousands of workers costs its comparison, not a scheduler call.
    settled: tuple[Any, ...] | None = None
    # Which ports each topology uses on each supervisor (nimbus/core/occupancy.py), carried
    # forward by with_topology / with_topologies / without; stale (and rebuilt when asked
    # for) after any other change of `topologies`.
    occupancy: occ.Occupancy | None = field(default=None, compare=False, repr=False)
    # Supervisors and slots out of service after repeated worker failures
    # (nimbus/scheduling/blacklist.py)
    blacklist: Blacklist = field(default_factory=Blacklist)

    def find(self, name_or_id: str) -> TopologyModel:
        """The topology with this id or name; NotAliveException if there is none."""
        if name_or_id in self.topologies:
            return self.topologies[name_or_id]
        for topology in self.topologies.values():
            if topology.base.name == name_or_id:
                return topology
        raise T.NotAliveException(msg=f"topology {name_or_id!r} is not alive")

    def name_taken(self, name: str) -> bool:
        return any(t.base.name == name for t in self.topologies.values())

    def with_topology(self, topology: TopologyModel) -> NimbusModel:
        return self.with_topologies({topology.id: topology})

    def with_topologies(self, changed: Mapping[str, TopologyModel]) -> NimbusModel:
        topologies = {**self.topologies, **changed}
        return replace(self, topologies=topologies, occupancy=self._carried(topologies, changed))

    def without(self, topology_id: str) -> NimbusModel:
        rest = {t: m for t, m in self.topologies.items() if t != topology_id}
        return replace(self, topologies=rest, occupancy=self._carried(rest, {topology_id: None}))

    def occupied(self) -> NimbusModel:
        """This model with its occupancy current (built once if it is stale)."""
        occupancy = occ.current(self.occupancy, self.topologies)
        return self if occupancy is self.occupancy else replace(self, occupancy=occupancy)

    def _carried(
        self, topologies: Mapping[str, TopologyModel], changed: Mapping[str, TopologyModel | None]
    ) -> occ.Occupancy | None:
        held = self.occupancy
        if held is None or held.of is not self.topologies:
            return None
        pairs = {tid: (self.topologies.get(tid), new) for tid, new in changed.items()}
        return occ.updated(held, topologies, pairs)


def synced_with(
    model: NimbusModel,
    bases: Mapping[str, StormBase],
    assignments: Mapping[str, Assignment],
    supervisors: Mapping[str, SupervisorInfo],
    tasks: Mapping[str, Mapping[int, str]] | None = None,
) -> NimbusModel:
    """The model with ZooKeeper's records: a standby's whole view, or a leader's after a
    decision was carried out only in part. What only nimbus knows (beats, grace, conf) is
    kept. A leader passes `tasks` (/tasks as read): a renumbering it wrote, or did not,
    must be known as it is, or the next round would restart every worker again. Without
    them (a standby) a topology keeps the ids it had, and a new one is numbered by its counts."""
    topologies = {}
    for tid, base in bases.items():
        old = model.topologies.get(tid)
        if tasks is None:
            ids = assign_task_ids(base.component_executors)
        else:
            ids = dict(tasks.get(tid, {}))
        if old is None:
            topologies[tid] = TopologyModel(tid, base, ids, assignments.get(tid))
        else:
            kept = old.tasks if tasks is None else ids
            topologies[tid] = replace(old, base=base, assignment=assignments.get(tid), tasks=kept)
    return replace(model, topologies=topologies, supervisors=dict(supervisors))


@dataclass(frozen=True)
class ClusterSnapshot:
    """The supervisors a decision was made against (which host each one runs on). The
    scheduler's own view of the cluster is nimbus/scheduling/scheduling_input.py's Cluster."""

    supervisors: Mapping[str, SupervisorInfo]

    @staticmethod
    def of(model: NimbusModel) -> ClusterSnapshot:
        return ClusterSnapshot(supervisors=model.supervisors)

    def hosts(self, placement: Mapping[int, Slot]) -> dict[str, str]:
        return {sid: self.supervisors[sid].host for sid, _ in set(placement.values())}
