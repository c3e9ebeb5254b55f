"""A worker's life cycle (worker/lifecycle.py): instruction lists pinned per transition, and
properties over random event sequences."""

import logging
from dataclasses import replace

from hypothesis import given, settings
from hypothesis import strategies as st

from squall.processes import (
    WORKER_ORPHANED,
    WORKER_REASSIGNED,
    WORKER_RESTART_ASKED,
    WORKER_UNHEALTHY,
)
from squall.records import Assignment, WorkerBeat
from squall.worker import lifecycle as lc
from squall.worker.readiness import READY_POLL_SECS

SLOT = ("s1", 6700)
HOSTS = {"s1": "h1", "s2": "h2", "s3": "h3"}


def assignment(**slots: tuple[str, int]) -> Assignment:
    """Tasks by name t<n> -> slot."""
    return Assignment(3, "code", HOSTS, {int(t[1:]): s for t, s in slots.items()}, {})


START = assignment(t1=SLOT, t2=SLOT, t3=("s2", 6700))  # this worker runs 1 and 2


def beat(**tasks: bool) -> WorkerBeat:
    return WorkerBeat(1, 0, 0, {int(t[1:]): {"ready": r} for t, r in tasks.items()})


ALL_READY = {"s1-6700": beat(t1=True, t2=True), "s2-6700": beat(t3=True)}


def begun(**changes) -> lc.Lifecycle:
    return replace(lc.begin(SLOT, START, 1.0, {1: "spout", 2: "spout", 3: "count"}), **changes)


def test_begin_notes_the_worker_s_tasks_and_the_topology_s():
    s = begun()
    assert s.my_tasks == (1, 2) and s.topology_tasks == (1, 2, 3) and s.topology_workers == 2
    assert s.topology_beats == {1: "s1-6700", 2: "s1-6700", 3: "s2-6700"}
    assert not s.active and not s.ready and s.exit_code is None


def test_an_active_status_lets_spouts_emit_only_once_the_topology_is_ready():
    s, out = lc.step(begun(), lc.StatusRead(True), 0.0)
    assert s.active and out == [lc.SetEmitting(False)]
    s, out = lc.step(begun(ready=True), lc.StatusRead(True), 0.0)
    assert out == [lc.SetEmitting(True)]


def test_an_inactive_status_stops_the_spouts():
    s, out = lc.step(begun(active=True, ready=True), lc.StatusRead(False), 0.0)
    assert not s.active and out == [lc.SetEmitting(False)]


def test_the_topology_record_gone_exits_reassigned():
    s, out = lc.step(begun(), lc.StatusRead(None), 0.0)
    assert s.exit_code == WORKER_REASSIGNED
    assert out == [lc.Say("the topology is gone; exiting"), lc.Exit(WORKER_REASSIGNED)]


def test_an_assignment_that_moves_other_tasks_reroutes():
    moved = assignment(t1=SLOT, t2=SLOT, t3=("s3", 6701))
    s, out = lc.step(begun(), lc.AssignmentRead(moved), 0.0)
    assert out == [lc.Route({1: ("h1", 6700), 2: ("h1", 6700), 3: ("h3", 6701)}, "h1")]
    assert s.topology_beats[3] == "s3-6701" and s.exit_code is None


def test_a_node_without_a_known_host_is_addressed_by_its_id():
    unknown = Assignment(3, "code", {}, {1: SLOT, 2: SLOT, 3: ("s3", 6701)}, {})
    s, out = lc.step(begun(), lc.AssignmentRead(unknown), 0.0)
    assert out == [lc.Route({1: ("s1", 6700), 2: ("s1", 6700), 3: ("s3", 6701)}, "s1")]


def test_an_assignment_that_changes_this_worker_s_tasks_exits():
    for changed in (
        assignment(t1=SLOT, t2=("s2", 6700), t3=("s2", 6700)),  # one moved away
        assignment(t1=SLOT, t2=SLOT, t3=SLOT),  # one more here
    ):
        s, out = lc.step(begun(), lc.AssignmentRead(changed), 0.0)
        assert s.exit_code == WORKER_REASSIGNED and out[-1] == lc.Exit(WORKER_REASSIGNED)
        assert out[0] == lc.Say(
            "this worker's tasks changed; exiting so the supervisor restarts it"
        )


def test_an_assignment_that_restarts_this_worker_s_tasks_in_place_exits():
    """A newer start time of a task here (a renumbering rebalance, a dead task restarted on
    its slot) is what the supervisor restarts a worker for: the worker goes first."""
    started = START.task_start_secs | {1: 100, 2: 90}
    first = lc.begin(SLOT, replace(START, task_start_secs=started), 1.0, {})
    assert first.my_start == 100
    same = replace(START, task_start_secs=started | {3: 200})  # a task elsewhere restarted
    s, out = lc.step(first, lc.AssignmentRead(same), 0.0)
    assert s.exit_code is None and [type(i) for i in out] == [lc.Route]
    for newer in ({1: 101, 2: 90}, {1: 100, 2: 101}):
        s, out = lc.step(first, lc.AssignmentRead(replace(START, task_start_secs=newer)), 0.0)
        assert s.exit_code == WORKER_REASSIGNED and out[-1] == lc.Exit(WORKER_REASSIGNED)
        assert out[0] == lc.Say(
            "this worker's tasks were restarted in place; exiting so the supervisor restarts it"
        )


def test_a_worker_without_start_times_starts_at_zero():
    assert lc.begin(SLOT, START, 1.0, {}).my_start == 0
    bare = lc.begin(("s9", 6700), START, 1.0, {})  # no task here: nothing to compare
    assert bare.my_tasks == () and bare.my_start == 0


def test_the_assignment_gone_exits():
    s, out = lc.step(begun(), lc.AssignmentRead(None), 0.0)
    assert out == [lc.Say("the topology's assignment is gone; exiting"), lc.Exit(4)]


def test_the_topology_becomes_ready_when_every_task_s_beat_says_so():
    s, out = lc.step(begun(active=True), lc.BeatsRead(ALL_READY), 0.0)
    assert s.ready
    assert out == [
        lc.Say("every task of the topology is ready; spouts may emit"),
        lc.SetEmitting(True),
    ]
    s, out = lc.step(begun(), lc.BeatsRead(ALL_READY), 0.0)  # ready, but not active
    assert s.ready and out[-1] == lc.SetEmitting(False)


def test_readiness_is_latched():
    s, out = lc.step(begun(ready=True), lc.BeatsRead({}), 0.0)
    assert s.ready and out == []


def test_a_waiting_worker_says_what_it_waits_for_every_ten_seconds():
    beats = {"s1-6700": beat(t1=True, t2=True), "s2-6700": beat(t3=False)}
    s, out = lc.step(begun(), lc.BeatsRead(beats), 100.0)
    assert out == [lc.Say("spouts wait for 1 tasks of count to be ready")] and not s.ready
    assert s.waiting_logged == 100.0
    s, out = lc.step(s, lc.BeatsRead(beats), 110.0)
    assert out == []
    s, out = lc.step(s, lc.BeatsRead(beats), 110.5)
    assert len(out) == 1


def test_a_round_beats_when_due_or_when_a_task_here_became_ready():
    s = begun(beat_due=5.0, beaten_ready=frozenset({1}))
    _, out = lc.step(s, lc.Tick(frozenset({1})), 4.0)  # nothing new, not due
    assert out == [lc.RecheckAssignment(), lc.ReadBeats(), lc.WriteErrors()]
    _, out = lc.step(s, lc.Tick(frozenset({1})), 5.0)  # due
    assert out[0] == lc.Beat(frozenset({1}))
    _, out = lc.step(s, lc.Tick(frozenset({1, 2})), 4.0)  # 2 became ready
    assert out == [
        lc.Beat(frozenset({1, 2})),
        lc.RecheckAssignment(),
        lc.ReadBeats(),
        lc.WriteErrors(),
    ]
    _, out = lc.step(begun(ready=True, beat_due=5.0), lc.Tick(frozenset()), 0.0)
    assert out == [lc.RecheckAssignment(), lc.WriteErrors()]  # ready: no more reads of beats


def test_a_written_beat_is_due_again_a_period_later():
    s, out = lc.step(begun(), lc.Beaten(frozenset({2})), 7.0)
    assert out == [] and s.beat_due == 8.0 and s.beaten_ready == frozenset({2})


def test_rounds_come_often_while_waiting_and_once_a_period_while_zookeeper_is_away():
    assert lc.next_round(begun()) == READY_POLL_SECS
    assert lc.next_round(begun(ready=True)) == 1.0
    away, out = lc.step(begun(), lc.ZooKeeperAway(), 0.0)
    assert out == [] and lc.next_round(away) == 1.0
    back, out = lc.step(away, lc.ZooKeeperBack(), 0.0)
    assert out == [] and lc.next_round(back) == READY_POLL_SECS


def test_other_exits_carry_their_codes():
    cases = [
        (lc.SupervisorGone(41), WORKER_ORPHANED, "its supervisor (pid 41) is gone: exiting"),
        (
            lc.Unhealthy("task 3 stalled"),
            WORKER_UNHEALTHY,
            "exiting so the supervisor restarts this worker: task 3 stalled",
        ),
        (lc.RestartAsked(), WORKER_RESTART_ASKED, "restarting on request (JVM_RESTART)"),
    ]
    levels = (logging.ERROR, logging.ERROR, logging.WARNING)
    for (event, code, text), level in zip(cases, levels, strict=True):
        s, out = lc.step(begun(), event, 0.0)
        assert s.exit_code == code and out == [lc.Say(text, level), lc.Exit(code)]


def test_an_exiting_worker_does_nothing_more():
    s, _ = lc.step(begun(active=True, ready=True), lc.SupervisorGone(41), 0.0)
    for event in (lc.StatusRead(True), lc.Tick(frozenset()), lc.AssignmentRead(None)):
        assert lc.step(s, event, 0.0) == (s, [])


def test_an_unknown_event_is_a_type_error():
    import pytest

    with pytest.raises(TypeError):
        lc.step(begun(), "tick", 0.0)  # type: ignore[arg-type]


# --- properties over random event sequences ---

ASSIGNMENTS = [
    None,
    START,
    assignment(t1=SLOT, t2=SLOT, t3=("s3", 6701)),  # 3 moved: routes
    assignment(t1=SLOT, t2=("s2", 6700), t3=("s2", 6700)),  # 2 moved away: exits
]
BEATS = [{}, ALL_READY, {"s1-6700": beat(t1=True, t2=True), "s2-6700": beat(t3=False)}]
EVENTS = st.one_of(
    st.sampled_from([True, False, None]).map(lc.StatusRead),
    st.sampled_from(ASSIGNMENTS).map(lc.AssignmentRead),
    st.sampled_from(BEATS).map(lc.BeatsRead),
    st.frozensets(st.sampled_from([1, 2])).map(lc.Tick),
    st.frozensets(st.sampled_from([1, 2])).map(lc.Beaten),
    st.sampled_from([lc.ZooKeeperAway(), lc.ZooKeeperBack()]),
    st.sampled_from([lc.SupervisorGone(41), lc.Unhealthy("stalled"), lc.RestartAsked()]),
)


def exits_for(event: lc.Event) -> bool:
    match event:
        case lc.StatusRead(active=None) | lc.AssignmentRead(assignment=None):
            return True
        case lc.AssignmentRead(assignment=a):
            return a is not None and tuple(a.tasks_on(SLOT)) != (1, 2)
        case lc.SupervisorGone() | lc.Unhealthy() | lc.RestartAsked():
            return True
    return False


@settings(max_examples=300, deadline=None)
@given(st.lists(st.tuples(EVENTS, st.floats(0, 1000)), max_size=40))
def test_spouts_emit_only_while_active_and_ready_and_a_worker_exits_exactly_once(steps):
    s, exits, emitting, seen_active, seen_ready = begun(), [], False, None, False
    for event, now in steps:
        if isinstance(event, lc.StatusRead) and event.active is not None:
            seen_active = event.active
        s, out = lc.step(s, event, now)
        if s.exit_code is None:
            seen_ready = seen_ready or s.ready
        for instruction in out:
            assert not exits, "nothing after an exit"
            if isinstance(instruction, lc.SetEmitting):
                emitting = instruction.emit
                # emitting only while the last status read was active and all were ready
                assert not emitting or (seen_active and seen_ready)
            if isinstance(instruction, lc.Exit):
                exits.append(instruction.code)
            if isinstance(instruction, lc.Route):
                assert {t for t, a in instruction.addresses.items() if a == ("h1", 6700)} == {1, 2}
        assert emitting == (emitting and s.active and s.ready)
    should_exit = any(exits_for(event) for event, _ in steps)
    assert len(exits) == (1 if should_exit else 0)
    assert (s.exit_code is not None) == should_exit
    if exits:
        first = next(e for e, _ in steps if exits_for(e))
        assert exits[0] == lc.step(begun(), first, 0.0)[0].exit_code  # the first cause's code
