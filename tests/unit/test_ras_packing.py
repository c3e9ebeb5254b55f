"""Storm's packing for resource-aware topologies (issue 37, item 2): topology.workers is
ignored and executors go into as few workers as topology.worker.max.heap.size.mb needs;
topology.ras.workers.cap opts back into squall's cap; storm.worker.min.cpu.pcore.percent
charges every worker at least that much CPU; the conf reaches the scheduler's input."""

from __future__ import annotations

from dataclasses import replace

import pytest

from squall.nimbus.scheduling.cluster_scheduler import FULLY_SCHEDULED, schedule_all
from squall.nimbus.scheduling.resource_fit import cpu_added
from squall.nimbus.scheduling.schedule_invariants import round_violations, violations
from squall.nimbus.scheduling.scheduling_input import Cluster, Host, Outcome, TopologyRequest


def request(tid, n, workers, mem, cpu=10.0, **kw):
    return TopologyRequest(
        tid, dict.fromkeys(range(1, n + 1), "c"), workers, needs={"c": (mem, cpu)}, **kw
    )


def workers(outcome: Outcome) -> int:
    return len(set(outcome.placement.values()))


def test_a_topology_is_packed_into_as_few_workers_as_its_heap_allows():
    """10 tasks of 100 MB in workers of 768 MB: two workers (7 + 3), though topology.workers
    asks for 5 (Storm ignores it under RAS)."""
    cluster = Cluster(
        {"h": Host(tuple(range(1, 7)), 8000.0, 800.0), "g": Host((1, 2), 8000.0, 800.0)}
    )
    out = schedule_all([request("a", 10, 5, 100.0)], cluster)["a"]
    assert out.status == FULLY_SCHEDULED and workers(out) == 2
    assert sorted(list(out.placement.values()).count(s) for s in set(out.placement.values())) == [
        3,
        7,
    ]
    assert len({s[0] for s in out.placement.values()}) == 1  # both workers on one host


def test_packing_uses_more_workers_than_topology_workers_when_resources_need_them():
    cluster = Cluster({"h": Host((1, 2, 3, 4), 8000.0, 800.0)})
    out = schedule_all([request("a", 4, 1, 500.0, worker_heap_mb=768.0)], cluster)["a"]
    assert out.placed and workers(out) == 4


def test_the_squall_cap_spreads_over_topology_workers_and_refuses_past_it():
    cluster = Cluster({"h": Host((1, 2, 3, 4, 5), 8000.0, 800.0)})
    capped = request("a", 10, 5, 100.0, capped=True)
    assert workers(schedule_all([capped], cluster)["a"]) == 5
    too_few = request("b", 4, 1, 500.0, capped=True)
    out = schedule_all([too_few], cluster)["b"]
    assert not out.placed and "raise topology.workers" in out.status


def test_a_second_topology_fits_because_the_first_was_packed():
    """Storm's resilience case: spread over 3 slots, the first left no slot for the second."""
    cluster = Cluster({"h": Host((1, 2, 3), 1000.0, 400.0)})
    first = request("first", 3, 3, 100.0, priority=0)
    second = request("second", 2, 2, 300.0, priority=1, worker_heap_mb=600.0)
    out = schedule_all([first, second], cluster)
    assert workers(out["first"]) == 1 and out["second"].placed


def test_a_kept_topology_spread_wider_than_needed_does_not_move():
    cluster = Cluster({"h": Host((1, 2, 3), 8000.0, 800.0)})
    spread = {1: ("h", 1), 2: ("h", 2), 3: ("h", 3)}
    out = schedule_all([request("a", 3, 3, 100.0, existing=spread)], cluster)["a"]
    assert out.placement == spread


def test_the_cpu_floor_charges_a_worker_at_least_it():
    assert cpu_added(None, 10.0, 50.0) == 50.0  # opening a worker
    assert cpu_added(10.0, 10.0, 50.0) == 0.0  # still under the floor
    assert cpu_added(45.0, 10.0, 50.0) == 5.0  # past it by 5
    assert cpu_added(None, 10.0, 0.0) == 10.0


def test_the_cpu_floor_limits_workers_per_host_and_the_invariant_counts_it():
    """Two topologies of 2 x 10% with a 40% floor on a 100% host: two workers fit, the third
    topology's does not (Storm's minCpuPreventsThirdTopo)."""
    cluster = Cluster({"h": Host((1, 2, 3, 4), 60000.0, 100.0)}, min_worker_cpu=40.0)
    tops = [request(f"t{i}", 2, 1, 100.0, submitted=float(i)) for i in range(3)]
    out = schedule_all(tops, cluster)
    assert [out[t.id].placed for t in tops] == [True, True, False]
    assert round_violations(tops, cluster, out) == []
    squeezed = {"t0": {1: ("h", 1), 2: ("h", 1)}, "t1": {1: ("h", 2)}, "t2": {1: ("h", 3)}}
    assert violations(tops, cluster, squeezed) == ["supervisor h is given 120 % CPU of its 100"]


def test_the_floor_makes_a_topology_that_must_split_fail():
    """Storm's minCpuWorkerSplitFails: 10 x (500 MB, 10%) in 2000 MB workers need three
    workers of 50% each on a 100% host."""
    cluster = Cluster({"h": Host((1, 2, 3, 4), 60000.0, 100.0)}, min_worker_cpu=50.0)
    alone = request("a", 10, 1, 500.0, worker_heap_mb=2000.0)
    assert not schedule_all([alone], cluster)["a"].placed
    one_worker = replace(alone, worker_heap_mb=5000.0)
    assert workers(schedule_all([one_worker], cluster)["a"]) == 1


# --- from the conf -----------------------------------------------------------------------


def test_the_conf_reaches_the_request_and_the_cluster():
    from squall.nimbus.core.model import NimbusSettings, TopologyModel
    from squall.nimbus.scheduling.resource_conf import cluster_of, request_of
    from squall.records import StormBase, SupervisorInfo

    settings = NimbusSettings(
        1,
        1,
        1,
        1,
        1,
        scheduling={
            "storm.worker.min.cpu.pcore.percent": 25,
            "resource.aware.scheduler.priority.strategy": (
                "org.apache.storm.scheduler.resource.strategies.priority."
                "FIFOSchedulingPriorityStrategy"
            ),
        },
    )
    base = StormBase("t", "active", 1234, 3, {"c": 2}, component_resources={"c": (100.0, 10.0)})
    topology = TopologyModel("t-1", base, {1: "c", 2: "c"}, conf={"topology.ras.workers.cap": True})
    got = request_of(topology, settings, reschedule=True)
    assert (got.submitted, got.capped, got.max_workers) == (1234.0, True, 3)
    assert not request_of(replace(topology, conf={}), settings, reschedule=True).capped
    cluster = cluster_of({"s": SupervisorInfo("h", [1], 1)}, settings)
    assert (cluster.min_worker_cpu, cluster.priority_strategy) == (25.0, "fifo")


def test_nimbus_refuses_an_unknown_priority_strategy_at_start():
    from squall.config import load_defaults
    from squall.nimbus.core.model import NimbusSettings
    from squall.nimbus.scheduling.scheduling_priority import UnknownPriorityStrategy

    conf = {**load_defaults(), "resource.aware.scheduler.priority.strategy": "com.acme.Mine"}
    with pytest.raises(UnknownPriorityStrategy, match="'com.acme.Mine' is not supported"):
        NimbusSettings.from_conf(conf)
    short = {**conf, "resource.aware.scheduler.priority.strategy": "FIFOSchedulingPriorityStrategy"}
    assert NimbusSettings.from_conf(short).scheduling


def test_a_packed_worker_that_died_is_tried_elsewhere_first():
    """The blacklist rule (nimbus/core/reassign.py asks a topology to avoid the slot its worker
    just died on): a packed topology needs no set number of workers, so any slot left is
    tried first; its four tasks move together to one other worker."""
    cluster = Cluster({"h": Host((1, 2), 8000.0, 800.0), "g": Host((1,), 8000.0, 800.0)})
    existing = dict.fromkeys(range(1, 5), ("h", 1))
    died = request("a", 4, 1, 100.0, existing=existing, alive=frozenset())
    out = schedule_all([replace(died, avoid=frozenset({("h", 1)}))], cluster)["a"]
    assert out.placed and workers(out) == 1 and ("h", 1) not in set(out.placement.values())
    stays = schedule_all([died], cluster)["a"]  # not avoided: restarted in place
    assert stays.placement == existing
