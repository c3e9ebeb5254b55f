"""Nimbus's size limits (issue #11): one check, in the pure core, for submit, rebalance and
`config set topology.acker.executors`; and the ZooKeeper write estimate behind it."""

from dataclasses import replace

import pytest

from squall import thrift_api as T
from squall.nimbus.core import events as ev
from squall.nimbus.core.decide import handle
from squall.nimbus.core.write_size import (
    BUDGET,
    JUTE_MAX_BUFFER,
    assignment_bound,
    create_op,
    delete_op,
    topology_write_bytes,
)
from squall.records import Assignment, StormBase, encode
from squall.structure import ACKER, assign_task_ids
from squall.zk.layout import ZkLayout

from .test_nimbus_decide import SETTINGS, STRUCTURE, leader, submitted

# STRUCTURE has a:2, b:1; default ackers 0; __acker executors run only where spouts do not
# track their own trees (squall/tree_tracking.py)
LIMITED = replace(SETTINGS, max_tasks=5, spouts_track_trees=False)


ACKERS = {"topology.spouts.track.trees": False}


def test_where_spouts_track_their_trees_ackers_are_no_tasks():
    model = limited_leader(spouts_track_trees=True, default_ackers=None, max_tasks=3)
    out = handle(model, submit(model, {"topology.acker.executors": 7}))[1]
    assert sorted(out[1].tasks.values()) == ["a", "a", "b"]
    model, _ = submitted()
    model = replace(model, settings=replace(LIMITED, max_tasks=3))
    assert handle(model, ev.SetConfig("t", "topology.acker.executors", 1000, 1000.0))[1]


def limited_leader(**settings):
    model, _ = leader()
    return replace(model, settings=replace(LIMITED, **settings))


def refusal(model, event) -> str:
    with pytest.raises(T.InvalidTopologyException) as info:
        handle(model, event)
    return info.value.msg


def submit(model, conf, name="t"):
    return ev.Submit(name, f"{name}-1", STRUCTURE, conf, "up", False, 0.0, 1000.0)


def test_submit_counts_ackers_against_nimbus_max_tasks():
    model = limited_leader()
    out = handle(model, submit(model, {"topology.acker.executors": 2}))[1]
    assert sorted(out[1].tasks.values()) == [ACKER, ACKER, "a", "a", "b"]  # 5: the limit
    msg = refusal(model, submit(model, {"topology.acker.executors": 3}))
    assert (
        msg == "topology 't' would have 6 tasks (executors and ackers); nimbus.max.tasks allows 5"
    )


def test_default_ackers_count_too():
    model = limited_leader(default_ackers=None)  # one acker per worker: 2 workers
    assert handle(model, submit(model, {}))[1]
    model = limited_leader(default_ackers=None, max_tasks=4)
    assert "would have 5 tasks" in refusal(model, submit(model, {}))


@pytest.mark.parametrize("ackers", [-1, 1.5, True, "2"])
def test_ackers_must_be_a_whole_number(ackers):
    model = limited_leader()
    msg = refusal(model, submit(model, {"topology.acker.executors": ackers}))
    assert msg == "topology.acker.executors must be a whole number, 0 or more"


def test_a_name_equal_to_a_running_topologys_id_is_refused():
    model, _ = submitted()  # id t-1
    msg = refusal(model, submit(model, {}, name="t-1"))
    assert msg == "topology name 't-1' is the id of a running topology; choose another"
    assert handle(model, submit(model, {}, name="t-2"))[1]


def test_rebalance_is_held_to_nimbus_max_tasks():
    model, _ = submitted()
    model = replace(model, settings=LIMITED)
    assert handle(model, ev.Rebalance("t", 0, None, {"a": 4}, 1000.0))[1]  # 4 + 1 = 5
    msg = refusal(model, ev.Rebalance("t", 0, None, {"a": 1_000_000}, 1000.0))
    assert msg == (
        "topology 't' would have 1000001 tasks (executors and ackers); nimbus.max.tasks allows 5"
    )


def test_rebalance_counts_the_components_it_does_not_change():
    model, _ = submitted()
    model = replace(model, settings=replace(LIMITED, max_tasks=4))
    assert "would have 5 tasks" in refusal(model, ev.Rebalance("t", 0, None, {"b": 3}, 1000.0))


def test_config_set_ackers_is_held_to_nimbus_max_tasks():
    model, _ = submitted(conf=ACKERS)
    model = replace(model, settings=LIMITED)
    assert handle(model, ev.SetConfig("t", "topology.acker.executors", 2, 1000.0))[1]
    msg = refusal(model, ev.SetConfig("t", "topology.acker.executors", 1_000_000, 1000.0))
    assert msg == (
        "topology 't' would have 1000003 tasks (executors and ackers); nimbus.max.tasks allows 5"
    )
    assert "whole number" in refusal(model, ev.SetConfig("t", "topology.acker.executors", 1.5, 0))


def test_config_set_ackers_null_means_one_per_worker():
    model, _ = submitted(conf=ACKERS)  # 2 workers, 3 tasks
    model = replace(model, settings=replace(LIMITED, max_tasks=4))
    assert "would have 5 tasks" in refusal(
        model, ev.SetConfig("t", "topology.acker.executors", None, 1000.0)
    )


def test_a_topology_whose_zookeeper_write_would_not_fit_is_refused():
    model = limited_leader(zk_root="/" + "r" * 200_000)  # 3 tasks, each path 200 KB
    msg = refusal(model, submit(model, {}))
    assert msg.startswith("topology 't' is too large for ZooKeeper: one write of its records")
    assert f"more than {BUDGET}; use fewer tasks or shorter names" in msg


def test_a_rebalance_write_counts_the_deletes_of_the_old_tasks():
    model, _ = submitted()
    topology = model.topologies["t-1"]
    lay = ZkLayout("/squall")
    old = range(1, 3001)  # many old tasks: the /tasks rewrite is the larger request
    size = topology_write_bytes("/squall", "t-1", topology.base, topology.tasks, [], old)
    creates = sum(create_op(lay.task("t-1", t), len(c)) for t, c in topology.tasks.items())
    # with the assignment that uses the new ids, in the same transaction
    assignment = create_op(lay.assignment("t-1"), assignment_bound(topology.tasks, [], "t-1"))
    assert size == sum(delete_op(lay.task("t-1", t)) for t in old) + creates + assignment


# --- the estimate: above what is really written, and the largest allowed topology fits ---

LONG = "n" * 100  # the longest topology and component name validation allows


def largest(max_tasks=1000, nodes=100):
    """max_tasks tasks, each its own component with a 100-character name (the worst case for
    /tasks records and the base), on `nodes` supervisors with 36-character ids."""
    counts = {f"{i:04d}" + "c" * 96: 1 for i in range(max_tasks - 1)}
    counts[ACKER] = 1
    tid = f"{LONG}-1a2b3c4d-1700000000"
    base = StormBase(LONG, "active", 1_700_000_000, max_tasks, counts, owner=LONG)
    node_ids = [f"{i:036d}" for i in range(nodes)]
    return tid, base, assign_task_ids(counts), node_ids


def test_the_largest_allowed_topology_fits_in_one_zookeeper_request():
    tid, base, tasks, node_ids = largest()
    size = topology_write_bytes("/squall", tid, base, tasks, node_ids, old_task_ids=tasks)
    assert size <= BUDGET < JUTE_MAX_BUFFER
    assert size > BUDGET / 2  # the estimate is not vacuous: twice the limit would not fit
    tid, base, tasks, node_ids = largest(max_tasks=2000)
    assert topology_write_bytes("/squall", tid, base, tasks, node_ids) > BUDGET


def test_the_estimate_is_above_the_bytes_really_written():
    tid, base, tasks, node_ids = largest()
    placement = {t: (node_ids[t % len(node_ids)], 65535) for t in tasks}
    hosts = {n: "h" * 36 for n in node_ids}
    assignment = Assignment(1, tid, hosts, placement, {t: 1_700_000_000 for t in tasks})
    assert assignment_bound(tasks, node_ids, tid) >= len(encode(assignment))
    lay = ZkLayout("/squall")
    written = [(lay.storm(tid), encode(base)), (lay.tasks(tid), b"")]
    written += [(lay.task(tid, t), c.encode()) for t, c in tasks.items()]
    written += [(lay.taskbeats(tid), b""), (lay.assignment(tid), encode(assignment))]
    payload = sum(len(p) + len(d) for p, d in written)
    assert topology_write_bytes("/squall", tid, base, tasks, node_ids) >= payload + 40 * len(
        written
    )


def test_the_write_budget_boundary_and_a_rebalance_counts_its_deletes(monkeypatch):
    from squall.nimbus.rpc import request_checks

    model, _ = submitted()
    old = {t: "a" for t in range(1, 3001)}  # many old /tasks children: the rewrite is larger
    model = model.with_topology(replace(model.topologies["t-1"], tasks=old))
    grown = replace(model.topologies["t-1"].base, component_executors={"a": 3, "b": 1})
    tasks = assign_task_ids(grown.component_executors)
    size = topology_write_bytes("/squall", "t-1", grown, tasks, model.supervisors, old)
    assert size > topology_write_bytes("/squall", "t-1", grown, tasks, model.supervisors)
    monkeypatch.setattr(request_checks, "BUDGET", size)
    assert handle(model, ev.Rebalance("t", 0, None, {"a": 3}, 1000.0))[1]
    monkeypatch.setattr(request_checks, "BUDGET", size - 1)
    assert "too large for ZooKeeper" in refusal(model, ev.Rebalance("t", 0, None, {"a": 3}, 0))
