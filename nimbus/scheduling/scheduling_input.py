"""What the cluster scheduler decides over, as plain frozen data: every topology's request,
every supervisor's ports and capacities, and the per-user guarantees (Storm's
IScheduler.schedule(topologies, cluster) shape). Built by nimbus/core/reassign.py from the model;
read by nimbus/scheduling/cluster_scheduler.py, which never sees ZooKeeper or a clock.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Mapping
from dataclasses import dataclass, field

from squall.records import Slot

Need = tuple[float, float]  # (on-heap memory MB, CPU percent of one core), per task

# Storm's defaults (defaults.yaml of Storm 2): what a task or a supervisor counts as when a
# topology declares resources for some components only, or a supervisor reports none.
DEFAULT_TASK_NEED: Need = (128.0, 10.0)
DEFAULT_WORKER_HEAP_MB = 768.0
DEFAULT_PRIORITY = 29
NO_GENERIC: Mapping[str, float] = {}
UNBOUNDED = 1 << 62  # "no limit" where a worker count is compared


@dataclass(frozen=True)
class Host:
    """One live supervisor: its ports and what it offers (supervisor.memory.capacity.mb,
    supervisor.cpu.capacity)."""

    ports: tuple[int, ...]
    memory_mb: float = 4096.0
    cpu: float = 400.0
    # supervisor.resources.map: generic resources offered, name -> amount ({"gpu.count": 2})
    generic: Mapping[str, float] = field(default_factory=dict)


@dataclass(frozen=True)
class Cluster:
    hosts: Mapping[str, Host]
    # resource.aware.scheduler.user.pools: user -> (memory MB, CPU percent) guaranteed
    user_pools: Mapping[str, Need] = field(default_factory=dict)
    # nimbus.slots.max.per.user: the slots one owner's topologies hold together at most
    # (None: no cap); owners in cap_exempt (nimbus.admins) have none
    slot_cap: int | None = None
    cap_exempt: frozenset[str] = frozenset()
    # storm.worker.min.cpu.pcore.percent: a resource-aware worker is charged at least this
    # much CPU however little its tasks declare (Storm's Cluster.calculateWorkerResources)
    min_worker_cpu: float = 0.0
    # resource.aware.scheduler.priority.strategy, as nimbus/scheduling/scheduling_priority.py names
    # it
    priority_strategy: str = "default"

    def slots(self) -> list[Slot]:
        return [(sid, port) for sid, host in sorted(self.hosts.items()) for port in host.ports]


DEFAULT_MAX_STATES = 10_000  # topology.ras.constraint.max.state.search


@dataclass(frozen=True)
class Constraints:
    """ConstraintSolverStrategy's rules (nimbus/scheduling/constraint_solver.py reads them from the
    conf): components that may not share a worker, tasks of a component per supervisor."""

    incompatible: Mapping[str, frozenset[str]] = field(default_factory=dict)
    max_per_node: Mapping[str, int] = field(default_factory=dict)
    max_states: int = DEFAULT_MAX_STATES


@dataclass(frozen=True)
class TopologyRequest:
    """One topology as the scheduler sees it.

    `reschedule` False: the topology keeps its placement as it is this round (it is being
    killed or rebalanced, or the event at hand concerns another topology); its slots and
    resources are only reserved. `needs` empty: the topology declares no resources and is
    placed by slot count alone (squall's default). `alive` None: every existing task lives."""

    id: str
    tasks: Mapping[int, str]  # task id -> component id
    num_workers: int
    existing: Mapping[int, Slot] = field(default_factory=dict)
    alive: frozenset[int] | None = None
    reschedule: bool = True
    owner: str = ""
    priority: int = DEFAULT_PRIORITY  # topology.priority: 0 is the most important
    needs: Mapping[str, Need] = field(default_factory=dict)  # component -> per-task need
    worker_heap_mb: float = DEFAULT_WORKER_HEAP_MB  # topology.worker.max.heap.size.mb
    # supervisor ids and (supervisor, port) slots its tasks just died on: used only when the
    # other slots cannot give it its workers (nimbus/core/reassign.py)
    avoid: frozenset[str | Slot] = frozenset()
    # when it was submitted (StormBase.launch_time_secs): older ranks first among equals
    submitted: float = 0.0
    # a resource-aware topology uses as many workers as its resources need (Storm's rule:
    # topology.workers is ignored); True (topology.ras.workers.cap) caps it at num_workers
    capped: bool = False
    # topology.scheduler.strategy ConstraintSolverStrategy: its constraints (None: Storm's
    # DefaultResourceAwareStrategy, nimbus/scheduling/resource_fit.py)
    constraints: Constraints | None = None
    # topology.component.resources.map: component -> {generic resource: amount per task}
    generic: Mapping[str, Mapping[str, float]] = field(default_factory=dict)
    # topology.scheduler.strategy GenericResourceAwareStrategy: hosts ordered by Storm's
    # rare-resource affinity (nimbus/scheduling/resource_fit.py); generic needs are checked either
    # way
    gras: bool = False

    @property
    def max_workers(self) -> int:
        """The workers it may use at most: num_workers, or any number (Storm's RAS)."""
        if self.needs and not self.capped:
            return UNBOUNDED
        return self.num_workers

    def avoids(self, slot: Slot) -> bool:
        return slot in self.avoid or slot[0] in self.avoid

    @property
    def resource_aware(self) -> bool:
        return bool(self.needs)

    def need(self, task: int) -> Need:
        return self.needs.get(self.tasks[task], DEFAULT_TASK_NEED)

    def generic_need(self, task: int) -> Mapping[str, float]:
        """The generic resources one task needs ({} for most)."""
        return self.generic.get(self.tasks[task], NO_GENERIC) if self.generic else NO_GENERIC

    def demand(self) -> Need:
        """All tasks' memory and CPU together (0, 0 for a slot-count topology)."""
        if not self.needs:
            return (0.0, 0.0)
        per_component = Counter(self.tasks.values())
        mem = sum(self.needs.get(c, DEFAULT_TASK_NEED)[0] * n for c, n in per_component.items())
        cpu = sum(self.needs.get(c, DEFAULT_TASK_NEED)[1] * n for c, n in per_component.items())
        return (mem, cpu)


@dataclass(frozen=True)
class Outcome:
    """A topology's result. `placed` False: it could not fit (or was evicted) and `status`
    says why; `placement` is then what it keeps, never a part of a new placement."""

    placement: Mapping[int, Slot]
    status: str
    placed: bool = True
