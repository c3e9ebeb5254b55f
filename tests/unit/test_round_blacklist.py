"""What one placement round (nimbus/core/reassign.py) does with the blacklist and the caps: the
dead workers it blames, the supervisors it releases early when a topology would find no
healthy slot (Storm's BlacklistScheduler releases the earliest listed for a shortage), the
log messages that announce both, where a dead task is asked to go, and the refusals of a
broken scheduler outcome. Pure: the rounds are called with plain data and the clock."""

from dataclasses import replace

from squall.nimbus.core import instructions as ins
from squall.nimbus.core import reassign
from squall.nimbus.scheduling import blacklist as bl
from squall.records import SupervisorInfo

from .test_nimbus_decide import SETTINGS, beat, leader, submitted

ONCE = replace(SETTINGS, blacklist=bl.BlacklistSettings(300, 1, 1800))
ONE_EACH = {"s1": SupervisorInfo("h1", [6700], 0), "s2": SupervisorInfo("h2", [6700], 0)}
THREE = {**ONE_EACH, "s3": SupervisorInfo("h3", [6700], 0)}


def cluster(supervisors, settings=ONCE, **topologies):
    """A leader over `supervisors` with topologies submitted in order (name ->
    topology.workers); each lands where the balanced scheduler puts it."""
    model = replace(leader(supervisors=supervisors)[0], settings=settings)
    for name, workers in topologies.items():
        model, _ = submitted(model, name, {"topology.workers": workers})
    return model


def slots_of(model, tid):
    return set(model.topologies[tid].assignment.task_slots.values())


def announced(out):
    return [
        (i.key, i.values["listed"], i.values["epoch"])
        for i in out
        if isinstance(i, ins.AppendLog) and i.type == "blacklist"
    ]


def alive(model, tid, *slots):
    """Beats for `tid`'s tasks on `slots`: those workers are running."""
    tasks = model.topologies[tid].assignment.task_slots
    return {
        slot: beat(1, *sorted(t for t, s in tasks.items() if s == slot)) for slot in sorted(slots)
    }


def test_a_shortage_releases_the_listed_supervisor_in_the_round_that_lists_it():
    """t's worker on s1 never starts (listed: tolerance.count 1), and the only other slot
    holds u: with no healthy slot for t, s1 is released at once and t restarts there; both
    changes are announced, in order, with the leader's epoch."""
    model = cluster(ONE_EACH, t=1, u=1)
    assert slots_of(model, "t-1") == {("s1", 6700)} and slots_of(model, "u-1") == {("s2", 6700)}
    beats = {"u-1": alive(model, "u-1", ("s2", 6700))}
    after, out = reassign.reassign_round(model, {"t-1": False, "u-1": False}, beats, 61.0, 2000.0)
    assert announced(out) == [("s1", True, 3), ("s1", False, 3)]
    assert after.blacklist.listed == {}
    assert slots_of(after, "t-1") == {("s1", 6700)}
    writes = [i for i in out if isinstance(i, ins.WriteAssignment)]
    assert [w.topology_id for w in writes] == ["t-1"]
    before = model.topologies["t-1"].assignment.task_start_secs
    assert writes[0].assignment.task_start_secs != before  # a restart: a new start time


def test_a_topology_that_keeps_a_healthy_worker_releases_nothing():
    """t has a worker on s1 (dead: s1 is listed) and a live one on s2; u fills s3. No free
    healthy slot, but t still runs on a healthy one, so s1 stays listed and its tasks join
    t's worker on s2."""
    model = cluster(THREE, t=2, u=1)
    assert slots_of(model, "t-1") == {("s1", 6700), ("s2", 6700)}
    assert slots_of(model, "u-1") == {("s3", 6700)}
    beats = {
        "t-1": alive(model, "t-1", ("s2", 6700)),
        "u-1": alive(model, "u-1", ("s3", 6700)),
    }
    after, out = reassign.reassign_round(model, {"t-1": False, "u-1": False}, beats, 61.0, 2000.0)
    assert announced(out) == [("s1", True, 3)]
    assert set(after.blacklist.listed) == {"s1"}
    assert "never started (no heartbeat)" in after.blacklist.reasons()["s1"]
    assert slots_of(after, "t-1") == {("s2", 6700)}


def test_a_worker_that_stopped_beating_is_blamed_so():
    """A worker that beat once and then stopped is 'stopped heartbeating', not 'never
    started': the reason an operator reads says which."""
    model = cluster(ONE_EACH, t=1)
    beats = {"t-1": alive(model, "t-1", ("s1", 6700))}
    model, out = reassign.reassign_round(model, {"t-1": False}, beats, 62.0, 1062.0)
    assert out == [] and model.blacklist.listed == {}
    after, out = reassign.reassign_round(model, {"t-1": False}, beats, 100.0, 1100.0)
    assert announced(out) == [("s1", True, 3)]
    assert "worker of t-1 on port 6700 stopped heartbeating" in after.blacklist.reasons()["s1"]
    assert slots_of(after, "t-1") == {("s2", 6700)}


def test_only_the_tasks_nimbus_assigned_this_term_are_blamed():
    """Tasks with no start time this term (a leader that just took over and gives a grace)
    blame no supervisor, though they are dead and move."""
    model = cluster(ONE_EACH, t=1)
    topology = model.topologies["t-1"]
    model = model.with_topology(replace(topology, assigned_at={}))
    after, out = reassign.reassign_round(model, {"t-1": False}, {}, 61.0, 2000.0)
    assert after.blacklist.listed == {} and announced(out) == []


def test_a_dead_task_asks_to_be_placed_away_from_where_it_died():
    """Below the count nothing is listed, but the request avoids the failed supervisor, or
    only the failed slot where blacklisting goes by slot."""
    request = reassign.request_of(
        cluster(ONE_EACH, t=1).topologies["t-1"], ONCE, True, frozenset(), scratch=False
    )
    request = replace(request, existing={1: ("s1", 6700), 2: ("s1", 6700), 3: ("s2", 6700)})
    assert reassign._avoiding(request, {1}, request.existing, True).avoid == {"s1"}
    assert reassign._avoiding(request, {1, 3}, request.existing, False).avoid == {
        ("s1", 6700),
        ("s2", 6700),
    }
    untouched = reassign._avoiding(request, set(), request.existing, True)
    assert untouched is request


def test_the_per_user_slot_cap_holds_in_every_round():
    """nimbus.slots.max.per.user applies to the placement rounds, not only to submits."""
    hosts = {"s1": SupervisorInfo("h1", [1, 2], 0), "s2": SupervisorInfo("h2", [1, 2], 0)}
    model = cluster(hosts, replace(ONCE, slots_per_user=1), t=3)
    assert len(slots_of(model, "t-1")) == 1
    after, _ = reassign.reassign_round(model, {"t-1": True}, {}, 10.0, 1010.0)
    assert len(slots_of(after, "t-1")) == 1
    assert "nimbus.slots.max.per.user (1)" in after.topologies["t-1"].sched_status


def broken_once(monkeypatch):
    """The scheduler's first call leaves a task out (a scheduler bug); later calls are right."""
    real, calls = reassign.schedule_all, []

    def schedule(requests, cluster):
        out = dict(real(requests, cluster))
        calls.append(len(requests))
        if len(calls) == 1:
            for tid, outcome in out.items():
                placement = dict(outcome.placement)
                placement.pop(min(placement), None)
                out[tid] = replace(outcome, placement=placement)
        return out

    monkeypatch.setattr(reassign, "schedule_all", schedule)
    return calls


def test_a_refused_submit_placement_is_not_scheduled_and_says_why(monkeypatch):
    broken_once(monkeypatch)
    model = cluster(ONE_EACH, t=1)
    topology = model.topologies["t-1"]
    assert topology.assignment.task_slots == {}
    assert topology.sched_status == "Not scheduled: the scheduler's outcome was refused"


def test_a_refused_narrowed_round_falls_back_to_the_round_over_every_topology(monkeypatch):
    """reassign_touched: the narrowed round's outcome breaks an invariant, so it counts as
    unplaced and the round over every due topology decides instead: t's worker never
    started, and that round restarts it (a write)."""
    model = cluster(THREE, t=1)
    calls = broken_once(monkeypatch)
    after, out = reassign.reassign_touched(
        model, {"t-1": False}, lambda: {"t-1": False}, {}, 61.0, 2000.0
    )
    assert len(calls) == 2
    assert [i.topology_id for i in out if isinstance(i, ins.WriteAssignment)] == ["t-1"]
