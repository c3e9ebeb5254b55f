"""The checks every request that sizes a topology passes (submit, rebalance, config set),
in one place so that each request refuses the same things with the same words: the refusal
is raised before any instruction is produced, so a refused request changes nothing."""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any

from squall.nimbus.core import events as ev
from squall.nimbus.core.model import NimbusModel, NimbusSettings
from squall.nimbus.core.write_size import BUDGET, topology_write_bytes
from squall.nimbus.scheduling.resource_conf import component_resources, worker_heap
from squall.records import StormBase
from squall.structure import assign_task_ids
from squall.tree_tracking import ACKERS_KEY
from squall.validation import invalid


def check_workers(num_workers: Any) -> int:
    """topology.workers, whether from submit, rebalance or config set, is at least 1."""
    if not whole(num_workers) or num_workers < 1:
        raise invalid("topology.workers must be at least 1")
    return num_workers


def whole(value: Any) -> bool:
    return isinstance(value, int) and not isinstance(value, bool)


def check_ackers(ackers: Any) -> int:
    if not whole(ackers) or ackers < 0:
        raise invalid(f"{ACKERS_KEY} must be a whole number, 0 or more")
    return ackers


def check_size(
    model: NimbusModel, tid: str, base: StormBase, old_tasks: Mapping[int, str]
) -> dict[int, str]:
    """A topology's size, whether from submit, rebalance or config set: at most
    nimbus.max.tasks tasks, and ZooKeeper writes that fit in one request (write_size)."""
    limit = model.settings.max_tasks
    total = sum(base.component_executors.values())
    if total > limit:
        raise invalid(
            f"topology {base.name!r} would have {total} tasks (executors and ackers); "
            f"nimbus.max.tasks allows {limit}"
        )
    tasks = assign_task_ids(base.component_executors)
    root = model.settings.zk_root
    size = topology_write_bytes(root, tid, base, tasks, model.supervisors, old_tasks)
    if size > BUDGET:
        raise invalid(
            f"topology {base.name!r} is too large for ZooKeeper: one write of its records "
            f"would take about {size} bytes, more than {BUDGET}; use fewer tasks or shorter names"
        )
    return tasks


# What Storm's rebalance drops from a client's topology conf overrides (not the client's to
# set: nimbus records who submitted; ZooKeeper's ACLs; the host a worker names)
NOT_OVERRIDDEN = (
    "topology.submitter.principal",
    "topology.submitter.user",
    "storm.zookeeper.superACL",
    "storm.zookeeper.topology.auth.scheme",
    "storm.zookeeper.topology.auth.payload",
    "storm.local.hostname",
    "topology.classpath.beginning",
)


def conf_overrides(text: str | None) -> dict[str, Any]:
    """Storm 2's RebalanceOptions.topology_conf_overrides: a JSON object of topology conf
    keys (InvalidTopologyException otherwise), less what Storm drops from it."""
    if not text:
        return {}
    try:
        given = json.loads(text)
    except (ValueError, RecursionError) as exc:
        raise invalid(f"rebalance: topology_conf_overrides is not JSON: {exc}") from None
    if not isinstance(given, dict):
        raise invalid("rebalance: topology_conf_overrides must be a JSON object")
    return {str(k): v for k, v in given.items() if k not in NOT_OVERRIDDEN}


def check_resources(model: NimbusModel, e: ev.Submit) -> dict[str, tuple[float, float]]:
    """Declared resources are numbers, and no task needs more than one worker may hold
    (Storm refuses such a topology at submit too: it could never be scheduled)."""
    needs = component_resources(e.structure, e.conf, model.settings)
    check_fits_a_worker(needs, worker_heap(e.conf, model.settings))
    return needs


def check_fits_a_worker(needs: Mapping[str, tuple[float, float]], heap: float) -> None:
    for component, (mem, _) in sorted(needs.items()):
        if mem > heap:
            raise invalid(
                f"component {component!r} needs {mem:g} MB per task, more than "
                f"topology.worker.max.heap.size.mb ({heap:g}): it could never be scheduled"
            )


def wait_secs_of(settings: NimbusSettings, wait_secs: int | None) -> int:
    """A kill's or rebalance's wait before it acts: the message timeout unless given (Storm's
    default), never negative."""
    if wait_secs is None:
        return settings.message_timeout
    if wait_secs < 0:
        raise invalid("wait_secs must not be negative")
    return wait_secs
