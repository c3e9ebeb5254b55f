"""nimbus.slots.max.per.user (nimbus/scheduling/cluster_scheduler.py): one user's topologies
together never hold more slots than the cap, the status says when the cap is what held one back, the
admins are exempt, and a second user gets the slots the first could not take."""

from dataclasses import replace

import pytest

from squall.nimbus.core.model import NimbusSettings, slot_cap
from squall.nimbus.scheduling.cluster_scheduler import FULLY_SCHEDULED, schedule_all
from squall.nimbus.scheduling.scheduling_input import Cluster, Host, TopologyRequest
from squall.records import SupervisorInfo

from .test_nimbus_decide import SETTINGS, leader, submitted

SIX = {"n1": Host((1, 2, 3)), "n2": Host((1, 2, 3))}


def request(tid, owner, workers, n=8, **kw):
    return TopologyRequest(tid, {t: "c" for t in range(1, n + 1)}, workers, owner=owner, **kw)


def slots(outcome):
    return len(set(outcome.placement.values()))


def test_one_users_topologies_share_its_cap_and_the_next_user_gets_the_rest():
    cluster = Cluster(SIX, slot_cap=3)
    out = schedule_all(
        [request("a1", "alice", 100000), request("a2", "alice", 2), request("b", "bob", 3)],
        cluster,
    )
    assert slots(out["a1"]) == 3 and slots(out["a2"]) == 0 and slots(out["b"]) == 3
    assert "user 'alice' holds nimbus.slots.max.per.user (3) slots" in out["a1"].status
    assert out["a2"].status.startswith("Not scheduled: user 'alice' holds 3 of its")
    assert out["b"].status == FULLY_SCHEDULED


def test_a_topology_kept_as_it_is_counts_against_its_owners_cap():
    kept = request("a1", "alice", 2, existing={1: ("n1", 1), 2: ("n2", 1)}, reschedule=False)
    out = schedule_all([kept, request("a2", "alice", 4)], Cluster(SIX, slot_cap=3))
    assert set(out) == {"a2"} and slots(out["a2"]) == 1


def test_free_slots_not_the_cap_say_so_and_admins_have_no_cap():
    cluster = Cluster({"n1": Host((1, 2))}, slot_cap=3, cap_exempt=frozenset({"admin"}))
    out = schedule_all([request("a", "alice", 4)], cluster)["a"]
    assert out.status == "Running on 2 of 4 workers: not enough free slots"
    out = schedule_all(
        [request("x", "admin", 6)], Cluster(SIX, slot_cap=1, cap_exempt=frozenset({"admin"}))
    )
    assert slots(out["x"]) == 6


def test_no_cap_changes_nothing():
    reqs = [request("a", "alice", 100000), request("b", "bob", 3)]
    assert schedule_all(reqs, Cluster(SIX)) == schedule_all(reqs, Cluster(SIX, slot_cap=None))
    assert slots(schedule_all(reqs, Cluster(SIX))["b"]) == 0  # what the cap is for


def test_a_resource_aware_topology_past_the_cap_is_not_placed():
    needs = {"c": (100.0, 10.0)}
    big = request("a", "alice", 4, n=8, needs=needs, worker_heap_mb=200.0)
    out = schedule_all([big], Cluster(SIX, slot_cap=2))["a"]
    assert not out.placed and out.placement == {}
    assert "nimbus.slots.max.per.user (2)" in out.status


def test_the_cap_comes_from_the_conf_and_a_bad_one_is_refused():
    assert slot_cap(None) is None and slot_cap(4) == 4
    for bad in (0, -1, 1.5, True, "4"):
        with pytest.raises(ValueError, match="nimbus.slots.max.per.user"):
            slot_cap(bad)


def test_submits_of_two_users_under_the_cap():
    """Through decide: alice's huge topology gets the cap, bob's gets his workers."""
    hosts = {"s1": SupervisorInfo("h1", [1, 2], 0), "s2": SupervisorInfo("h2", [1, 2], 0)}
    settings = replace(SETTINGS, slots_per_user=2, cap_exempt=frozenset({"admin"}))
    model = replace(leader(supervisors=hosts)[0], settings=settings)
    alice = {"topology.workers": 100000, "topology.submitter.user": "alice"}
    model, _ = submitted(model, "a", alice)
    bob = {"topology.workers": 2, "topology.submitter.user": "bob"}
    model, _ = submitted(model, "b", bob)
    a, b = model.topologies["a-1"], model.topologies["b-1"]
    assert len(a.assignment.slots()) == 2 and "nimbus.slots.max.per.user (2)" in a.sched_status
    assert len(b.assignment.slots()) == 2 and b.sched_status == FULLY_SCHEDULED


def test_settings_read_the_cap_and_the_admins():
    from squall.config import load_defaults

    conf = {**load_defaults(), "nimbus.slots.max.per.user": 5, "nimbus.admins": ["root"]}
    settings = NimbusSettings.from_conf(conf)
    assert (settings.slots_per_user, settings.cap_exempt) == (5, frozenset({"root"}))


def test_the_conf_refuses_a_cap_or_blacklist_count_below_one():
    from squall.config import ConfigError, load_defaults, validate

    for key in ("nimbus.slots.max.per.user", "blacklist.scheduler.tolerance.count"):
        with pytest.raises(ConfigError, match=f"{key} must be at least 1"):
            validate({key: 0}, load_defaults(), "conf")
