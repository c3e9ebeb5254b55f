"""From confs and records to the scheduler's plain input: which resources each component's
tasks declare (fixed at submit and kept in /storms), and the Cluster and TopologyRequest of
nimbus/scheduling/scheduling_input.py. Pure.

Lookup order for a topology.* scheduling key, as in Storm: the component's conf, then the
topology's conf, then the cluster's conf (nimbus's), then Storm's default.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from squall.nimbus.core.model import NimbusSettings, TopologyModel
from squall.nimbus.scheduling.constraint_solver import constraints_of
from squall.nimbus.scheduling.generic_resources import NOT_GENERIC
from squall.nimbus.scheduling.scheduling_input import (
    DEFAULT_PRIORITY,
    DEFAULT_TASK_NEED,
    DEFAULT_WORKER_HEAP_MB,
    Cluster,
    Constraints,
    Host,
    TopologyRequest,
)
from squall.nimbus.scheduling.scheduling_priority import storm_class, strategy_of
from squall.records import SupervisorInfo, amounts
from squall.structure import ACKER, TopologyStructure
from squall.validation import invalid

MEMORY = "topology.component.resources.onheap.memory.mb"
CPU = "topology.component.cpu.pcore.percent"
HEAP = "topology.worker.max.heap.size.mb"
PRIORITY = "topology.priority"
POOLS = "resource.aware.scheduler.user.pools"
WORKERS_CAP = "topology.ras.workers.cap"  # squall's: True caps a RAS topology at topology.workers
MIN_WORKER_CPU = "storm.worker.min.cpu.pcore.percent"
PRIORITY_STRATEGY = "resource.aware.scheduler.priority.strategy"
STRATEGY = "topology.scheduler.strategy"
STRATEGY_PACKAGE = "org.apache.storm.scheduler.resource.strategies.scheduling."
STRATEGIES = {
    "DefaultResourceAwareStrategy": "default",
    "GenericResourceAwareStrategy": "generic",
    "ConstraintSolverStrategy": "constraint",
}
GENERIC = "topology.component.resources.map"
SUPERVISOR_GENERIC = "supervisor.resources.map"


def _amount(value: Any, key: str, where: str) -> float | None:
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not 0 <= value < 1e12:
        raise invalid(f"{where}: {key} must be a number of at least 0, got {value!r:.40}")
    return float(value)


def component_resources(
    structure: TopologyStructure, conf: Mapping[str, Any], settings: NimbusSettings
) -> dict[str, tuple[float, float]]:
    """component -> (MB, CPU %) per task; empty when nothing anywhere declares either key
    (the topology is then placed by slot count, squall's default). Bad values are refused
    with InvalidTopologyException."""
    cluster = settings.scheduling
    scheduling_strategy(conf, settings)  # an unknown one is refused at submit
    base = {
        key: _amount(conf.get(key, cluster.get(key)), key, "topology conf") for key in (MEMORY, CPU)
    }
    declared = {ACKER: dict(base)}
    for name, info in structure.components.items():
        where = f"component {name!r}"
        own = {key: _amount(info.conf.get(key), key, where) for key in (MEMORY, CPU)}
        declared[name] = {key: base[key] if own[key] is None else own[key] for key in own}
    undeclared = all(v is None for d in declared.values() for v in d.values())
    if undeclared and not generic_resources(structure, conf, settings):
        return {}
    default_mem, default_cpu = DEFAULT_TASK_NEED
    return {
        name: (_or(d[MEMORY], default_mem), _or(d[CPU], default_cpu))
        for name, d in sorted(declared.items())
    }


def generic_resources(
    structure: TopologyStructure, conf: Mapping[str, Any], settings: NimbusSettings
) -> dict[str, dict[str, float]]:
    """component -> {generic resource: amount per task} from topology.component.resources.map
    (the component's conf, else the topology's, else the cluster's; the acker needs none),
    only the components that declare some; a malformed map is refused with
    InvalidTopologyException. A topology declaring any is resource-aware (memory and CPU
    then default as Storm's do)."""
    base = _generic(conf.get(GENERIC, settings.scheduling.get(GENERIC)), "topology conf")
    out: dict[str, dict[str, float]] = {}
    for name, info in sorted(structure.components.items()):
        own = info.conf.get(GENERIC)
        declared = base if own is None else _generic(own, f"component {name!r}")
        if any(amount > 0 for amount in declared.values()):
            out[name] = {k: v for k, v in declared.items() if v > 0}
    return out


def _generic(value: Any, where: str) -> dict[str, float]:
    try:
        found = amounts(value)
    except ValueError as exc:
        raise invalid(f"{where}: {GENERIC} {exc}") from None
    wrong = sorted(NOT_GENERIC & found.keys())
    if wrong:
        raise invalid(
            f"{where}: {GENERIC} names {', '.join(wrong)}; declare memory and CPU with "
            f"{MEMORY} and {CPU} (set_memory_load, set_cpu_load)"
        )
    return found


# Storm's names for a task's memory and CPU in a rebalance's resource overrides, normalized as
# its ResourceNameNormalizer does; off-heap memory squall does not place by
OVERRIDE_MEMORY = ("onheap.memory.mb", MEMORY)
OVERRIDE_CPU = ("cpu.pcore.percent", CPU)
OVERRIDE_IGNORED = ("offheap.memory.mb", "topology.component.resources.offheap.memory.mb")


def overridden_resources(
    components: Mapping[str, tuple[float, float]],
    generic: Mapping[str, Mapping[str, float]],
    names: set[str],
    overrides: Mapping[str, Mapping[str, Any]],
) -> tuple[dict[str, tuple[float, float]], dict[str, dict[str, float]]]:
    """A topology's per-task (MB, CPU %) and generic resources after Storm's rebalance
    resource overrides ({component: {"onheap.memory.mb": 512, "gpu.count": 1}}), checked:
    a component it lacks, or an amount that is no number >= 0, is InvalidTopologyException.
    A topology placed by slot count becomes resource-aware: its other components take
    Storm's defaults, as a topology declaring resources at submit does."""
    mem_cpu = dict(components) or {name: DEFAULT_TASK_NEED for name in sorted(names | {ACKER})}
    out_generic = {name: dict(found) for name, found in generic.items()}
    for component, wanted in sorted(overrides.items()):
        if component not in names:
            raise invalid(f"rebalance: {component!r} is not a component of the topology")
        if not isinstance(wanted, Mapping):
            raise invalid(f"rebalance: the resources of {component!r} must be a map")
        mem, cpu = mem_cpu.get(component, DEFAULT_TASK_NEED)
        extra = dict(out_generic.get(component, {}))
        for name, value in wanted.items():
            amount = _amount(value, str(name), f"rebalance resources of {component!r}")
            if name in OVERRIDE_MEMORY:
                mem = _or(amount, mem)
            elif name in OVERRIDE_CPU:
                cpu = _or(amount, cpu)
            elif name not in OVERRIDE_IGNORED and amount is not None:
                extra[str(name)] = amount
        mem_cpu[component] = (mem, cpu)
        kept = {k: v for k, v in extra.items() if v > 0}
        if kept:
            out_generic[component] = kept
        else:
            out_generic.pop(component, None)
    return mem_cpu, out_generic


ACKER_MEMORY = "topology.acker.resources.onheap.memory.mb"
ACKER_CPU = "topology.acker.cpu.pcore.percent"


def fragmentation_bar(scheduling: Mapping[str, Any]) -> tuple[float, float]:
    """The (MB, CPU %) a supervisor must have left to take one more task and one acker, at
    the cluster's defaults (Storm's Nimbus.isFragmented); what is left on one below it is
    fragmented."""
    mem, cpu = DEFAULT_TASK_NEED

    def amount(key: str, default: float) -> float:
        value: Any = scheduling.get(key)
        return float(value) if _number(value) else default

    return (
        amount(MEMORY, mem) + amount(ACKER_MEMORY, mem),
        amount(CPU, cpu) + amount(ACKER_CPU, cpu),
    )


def _or(value: float | None, default: float) -> float:
    return default if value is None else value


def worker_heap(conf: Mapping[str, Any], settings: NimbusSettings) -> float:
    value = conf.get(HEAP, settings.scheduling.get(HEAP))
    return float(value) if _number(value) and value >= 1 else DEFAULT_WORKER_HEAP_MB


def priority(conf: Mapping[str, Any], settings: NimbusSettings) -> int:
    value = conf.get(PRIORITY, settings.scheduling.get(PRIORITY))
    whole = isinstance(value, int) and not isinstance(value, bool) and value >= 0
    return value if whole else DEFAULT_PRIORITY


def scheduling_strategy(conf: Mapping[str, Any], settings: NimbusSettings) -> str:
    """'default', 'generic' or 'constraint' for topology.scheduler.strategy (Storm's class
    name, with or without its package; unset: Storm's DefaultResourceAwareStrategy); anything
    else is refused with InvalidTopologyException."""
    value = conf.get(STRATEGY, settings.scheduling.get(STRATEGY))
    strategy = _strategy(value)
    if strategy is None:
        known = ", ".join(STRATEGY_PACKAGE + name for name in STRATEGIES)
        raise invalid(f"{STRATEGY}: {str(value)!r:.120} is not supported; use one of {known}")
    return strategy


def _strategy(value: Any) -> str | None:
    return "default" if value is None else storm_class(value, STRATEGY_PACKAGE, STRATEGIES)


def workers_capped(conf: Mapping[str, Any], settings: NimbusSettings) -> bool:
    return conf.get(WORKERS_CAP, settings.scheduling.get(WORKERS_CAP)) is True


def min_worker_cpu(settings: NimbusSettings) -> float:
    """storm.worker.min.cpu.pcore.percent (nimbus's conf; Storm's default 0)."""
    value: Any = settings.scheduling.get(MIN_WORKER_CPU)
    return float(value) if _number(value) and 0 <= value < 1e12 else 0.0


def _number(value: Any) -> bool:
    return isinstance(value, (int, float)) and not isinstance(value, bool)


def user_pools(settings: NimbusSettings) -> dict[str, tuple[float, float]]:
    """{user: (memory MB, CPU %)}; an entry that is not {memory: n, cpu: n} counts as 0."""
    pools = settings.scheduling.get(POOLS) or {}
    out: dict[str, tuple[float, float]] = {}
    if not isinstance(pools, Mapping):
        return out
    for user, pool in pools.items():
        pool = pool if isinstance(pool, Mapping) else {}
        mem, cpu = pool.get("memory", 0), pool.get("cpu", 0)
        out[str(user)] = (
            float(mem) if _number(mem) else 0.0,
            float(cpu) if _number(cpu) else 0.0,
        )
    return out


def cluster_of(supervisors: Mapping[str, SupervisorInfo], settings: NimbusSettings) -> Cluster:
    hosts = {
        sid: Host(
            tuple(info.ports), info.memory_capacity_mb, info.cpu_capacity, info.generic_resources
        )
        for sid, info in supervisors.items()
    }
    return Cluster(
        hosts,
        user_pools(settings),
        min_worker_cpu=min_worker_cpu(settings),
        priority_strategy=strategy_of(settings.scheduling.get(PRIORITY_STRATEGY)),
    )


def request_of(
    topology: TopologyModel,
    settings: NimbusSettings,
    reschedule: bool,
    alive: frozenset[int] | None = None,
    scratch: bool = False,
) -> TopologyRequest:
    """A rescheduled scratch request keeps nothing (a rebalance); a fixed one keeps all."""
    existing = topology.assignment.task_slots if topology.assignment else {}
    return TopologyRequest(
        id=topology.id,
        tasks=topology.tasks,
        num_workers=topology.base.num_workers,
        existing={} if scratch and reschedule else existing,
        alive=alive,
        reschedule=reschedule,
        owner=topology.base.owner,
        priority=priority(topology.conf, settings),
        needs=topology.base.component_resources,
        worker_heap_mb=worker_heap(topology.conf, settings),
        submitted=float(topology.base.launch_time_secs),
        capped=workers_capped(topology.conf, settings),
        constraints=_constraints(topology, settings),
        generic=topology.base.component_generic,
        gras=_strategy(topology.conf.get(STRATEGY, settings.scheduling.get(STRATEGY))) == "generic",
    )


def _constraints(topology: TopologyModel, settings: NimbusSettings) -> Constraints | None:
    """ConstraintSolverStrategy's rules for a topology that chose it (checked at submit)."""
    value = topology.conf.get(STRATEGY, settings.scheduling.get(STRATEGY))
    if _strategy(value) != "constraint":
        return None
    return constraints_of(topology.conf, sorted(set(topology.tasks.values())))
