"""Storm's TestGenericResourceAwareStrategy (storm-server/src/test/java/org/apache/storm/
scheduler/resource/strategies/scheduling at v2.8.8) ported as data and run through squall's
scheduler, with topology.scheduler.strategy GenericResourceAwareStrategy: generic resources
(supervisor.resources.map, topology.component.resources.map) are never over-committed, a
task needing one no supervisor offers names it, and a topology that needs none keeps off
the hosts that offer them while others fit (Storm's rare-resource affinity).

Storm's expected worker groupings (which executors share a worker) come from its executor
order and acker placement, which squall does not have; the tests assert what those
groupings are for: where the GPU tasks land, how many hosts they need, and that nothing is
over-committed. Not ported: testGenericResourceAwareStrategySharedMemory (squall has no
shared memory regions) and testScheduleLeftOverAckers (Storm's per-worker ackers).
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Mapping
from dataclasses import replace

import pytest

from squall.nimbus.scheduling.cluster_scheduler import FULLY_SCHEDULED, schedule_all
from squall.nimbus.scheduling.schedule_invariants import round_violations, violations
from squall.nimbus.scheduling.scheduling_input import Cluster, Host, Outcome, TopologyRequest

GPU = "gpu.count"


def supervisors(
    count: int, ports: int, cpu: float, mem: float, generic: Mapping[str, float], first: int = 0
) -> dict[str, Host]:
    """Storm's genSupervisors(count, ports, cpu, mem, genericResources)."""
    return {
        f"r000s{i:03d}": Host(tuple(range(ports)), mem, cpu, dict(generic))
        for i in range(first, first + count)
    }


def request(
    name: str,
    components: list[tuple[str, int, Mapping[str, float]]],
    mem: float,
    cpu: float,
    heap: float,
    priority: int = 0,
    launch: float = 0.0,
) -> TopologyRequest:
    """A GRAS topology: (component, parallelism, generic need per task), each task of
    `mem` MB and `cpu` % CPU."""
    tasks: dict[int, str] = {}
    for component, par, _ in components:
        for _ in range(par):
            tasks[len(tasks) + 1] = component
    return TopologyRequest(
        name,
        tasks,
        1,
        owner="user",
        priority=priority,
        needs={c: (mem, cpu) for c, _, _ in components},
        worker_heap_mb=heap,
        submitted=launch,
        generic={c: dict(g) for c, _, g in components if g},
        gras=True,
    )


def run(requests: list[TopologyRequest], cluster: Cluster) -> dict[str, Outcome]:
    out = schedule_all(requests, cluster)
    assert round_violations(requests, cluster, out) == []
    assert violations(requests, cluster, {t: o.placement for t, o in out.items()}) == []
    return out


def gpus_per_host(req: TopologyRequest, placement: Mapping[int, tuple[str, int]]) -> Counter:
    used: Counter = Counter()
    for task, slot in placement.items():
        used[slot[0]] += req.generic_need(task).get(GPU, 0.0)
    return used


# testGenericResourceAwareStrategyWithoutSettingAckerExecutors (numOfAckersPerWorker 0):
# spout 1, bolt-1 2, bolt-2 2 with 1 GPU each, bolt-3 2 with 2 GPUs each; 500 MB, 50% CPU
# per executor; 4 supervisors of 4 ports, 200% CPU, 2000 MB, 2 GPUs; heap 2000.
GPU_TOPOLOGY = [
    ("spout", 1, {}),
    ("bolt-1", 2, {}),
    ("bolt-2", 2, {GPU: 1}),
    ("bolt-3", 2, {GPU: 2}),
]


@pytest.mark.parametrize(
    ("ackers", "heap"),
    [
        (0, 2000.0),  # numOfAckersPerWorker 0
        (2, 2000.0),  # -1 and 1: two ackers of 250 MB, 50% CPU
        (4, 2000.0),  # 2: four ackers
        (0, 1e12),  # testGenericResourceAwareStrategyInFavorOfShuffle: unbounded heap
    ],
)
def test_gpu_tasks_pack_on_three_hosts_as_storm_expects(ackers: int, heap: float) -> None:
    """Storm: 3 hosts; the bolt-3 tasks on separate hosts (2 GPUs each), the bolt-2 tasks
    together (1 GPU each), spout, bolt-1 and the ackers filling in. DIFFERS: which of those
    share a worker (Storm's executor order), and Storm's InFavorOfShuffle case uses 4 workers
    (topology.ras.order.executors.by.proximity.needs, not read) where squall packs 3."""
    cluster = Cluster(supervisors(4, 4, 200, 2000, {GPU: 2}))
    components = GPU_TOPOLOGY + ([("__acker", ackers, {})] if ackers else [])
    topo = request("testTopology-id", components, 500, 50, heap)
    topo = replace(topo, needs={**topo.needs, "__acker": (250.0, 50.0)})
    out = run([topo], cluster)["testTopology-id"]
    assert out.placed and out.status == FULLY_SCHEDULED
    placement = out.placement
    assert len(placement) == 7 + ackers
    assert len({slot[0] for slot in placement.values()}) == 3
    assert len(set(placement.values())) == 3  # one worker per host
    bolt3 = [s[0] for t, s in placement.items() if topo.tasks[t] == "bolt-3"]
    bolt2 = {s[0] for t, s in placement.items() if topo.tasks[t] == "bolt-2"}
    assert len(set(bolt3)) == 2 and len(bolt2) == 1 and not bolt2 & set(bolt3)
    assert all(used <= 2 for used in gpus_per_host(topo, placement).values())


def test_default_strategy_also_never_over_commits_gpus() -> None:
    """DefaultResourceAwareStrategy checks generic resources too (Storm's RAS_Node does);
    GRAS only changes the order of hosts and tasks."""
    cluster = Cluster(supervisors(4, 4, 200, 2000, {GPU: 2}))
    topo = replace(request("t", GPU_TOPOLOGY, 500, 50, 2000), gras=False)
    out = run([topo], cluster)["t"]
    assert out.placed
    assert all(used <= 2 for used in gpus_per_host(topo, out.placement).values())


def test_gras_requiring_eviction() -> None:
    """testGrasRequiringEviction: 4 supervisors with 1 GPU each, plenty of memory and CPU;
    gpu1 (3 spouts, 1 GPU each, priority 10) and noGpu (priority 10) are scheduled; gpu2
    (3 GPUs, priority 9) then evicts gpu1, which cannot be placed again, and noGpu stays."""
    cluster = Cluster(supervisors(4, 4, 500, 2000, {GPU: 1}))
    with_gpu = [("spout", 3, {GPU: 1})]
    gpu1 = request("hasGpu1", with_gpu, 20, 10, 1e12, priority=10, launch=1)
    no_gpu = request("hasNoGpu", [("spout", 3, {})], 20, 10, 1e12, priority=10, launch=2)
    gpu2 = request("hasGpu2", with_gpu, 20, 10, 1e12, priority=9, launch=3)
    first = run([gpu1, no_gpu], cluster)
    assert all(o.placed and o.status == FULLY_SCHEDULED for o in first.values())
    kept = [replace(r, existing=first[r.id].placement) for r in (gpu1, no_gpu)]
    second = run([*kept, gpu2], cluster)
    assert second["hasGpu2"].placed and second["hasGpu2"].status == FULLY_SCHEDULED
    assert not second["hasGpu1"].placed and not second["hasGpu1"].placement
    assert "hasGpu2" in second["hasGpu1"].status
    assert "hasNoGpu" not in second or second["hasNoGpu"].placed
    assert second.get("hasNoGpu", first["hasNoGpu"]).placement == first["hasNoGpu"].placement


def test_anti_affinity_keeps_plain_topology_off_gpu_hosts() -> None:
    """testAntiAffinityWithMultipleTopologies, scaled down (Storm's two racks of 40 hosts
    become 4 hosts with my.gpu and 4 without): a topology needing no GPU, scheduled first,
    puts nothing on the GPU hosts; the GPU topology then fits beside it."""
    # the GPU hosts first in slot order, where the default order would start
    hosts = supervisors(4, 4, 400, 4000, {"my.gpu": 1}) | supervisors(4, 4, 400, 4000, {}, 4)
    cluster = Cluster(hosts)
    simple = request(
        "topology-simple", [("spout-0", 5, {}), ("bolt-0", 5, {})], 300, 100, 8192, launch=1
    )
    first = run([simple], cluster)["topology-simple"]
    assert first.placed
    assert all(not hosts[s[0]].generic for s in first.placement.values())
    gpu = request(
        "topology-gpu",
        [("spout-0", 1, {}), ("gpu-bolt", 4, {"my.gpu": 1})],
        300,
        100,
        8192,
        launch=2,
    )
    second = run([replace(simple, existing=first.placement), gpu], cluster)
    assert second["topology-gpu"].placed
    assert second["topology-simple"].placement == first.placement


def test_unoffered_resource_leaves_the_topology_unscheduled_naming_it() -> None:
    cluster = Cluster(supervisors(2, 4, 400, 4000, {GPU: 2}))
    topo = request("fpga", [("spout", 1, {}), ("bolt", 2, {"fpga.count": 1})], 100, 10, 1000)
    out = run([topo], cluster)["fpga"]
    assert not out.placed and out.placement == {}
    assert "fpga.count" in out.status and "no supervisor offers" in out.status


def test_need_beyond_any_one_supervisor_names_the_most_offered() -> None:
    cluster = Cluster(supervisors(3, 4, 400, 4000, {GPU: 2}))
    topo = request("big", [("bolt", 1, {GPU: 3})], 100, 10, 1000)
    out = run([topo], cluster)["big"]
    assert not out.placed and "3 gpu.count" in out.status and "offers is 2" in out.status


def test_not_enough_free_gpus_says_how_many_are_free() -> None:
    cluster = Cluster(supervisors(2, 4, 400, 4000, {GPU: 1}))
    topo = request("three", [("bolt", 3, {GPU: 1})], 100, 10, 1000)
    out = run([topo], cluster)["three"]
    assert not out.placed and "3 gpu.count" in out.status and "2 gpu.count free" in out.status


@pytest.mark.parametrize("gras", [True, False])
def test_dead_gpu_task_restarts_on_its_slot_and_keeps_its_gpu(gras: bool) -> None:
    """A dead task's GPU stays charged on its own slot: another topology cannot take it."""
    cluster = Cluster(supervisors(1, 4, 400, 4000, {GPU: 1}))
    a = replace(request("a", [("bolt", 1, {GPU: 1})], 100, 10, 1000, launch=1), gras=gras)
    placed = run([a], cluster)["a"].placement
    b = request("b", [("bolt", 1, {GPU: 1})], 100, 10, 1000, priority=5, launch=2)
    a_dead = replace(a, existing=placed, alive=frozenset())
    out = run([a_dead, b], cluster)
    assert out["a"].placement == placed
    assert not out["b"].placed
