"""The topology status machine as a table of transitions."""

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from squall.nimbus.core.states import (
    ActivateAction,
    DeactivateAction,
    DoRebalance,
    IllegalTransition,
    KillAction,
    Monitor,
    Reassign,
    RebalanceAction,
    Remove,
    RemoveNow,
    ScheduleEvent,
    SetBase,
    Startup,
    transition,
)
from squall.records import PendingEvent, StormBase


def base(status="active", **kw):
    return StormBase("wc", status, 0, 2, {"a": 2, "b": 1}, **kw)


def test_activate_and_deactivate_set_the_status():
    [set_] = transition(base("inactive"), ActivateAction(), 0)
    assert isinstance(set_, SetBase) and set_.base.status == "active"
    [set_] = transition(base("active"), DeactivateAction(), 0)
    assert set_.base.status == "inactive"
    assert transition(base("active"), ActivateAction(), 0) == []


def test_kill_sets_killed_and_schedules_remove_with_due_time():
    set_, later = transition(base("inactive"), KillAction(5), 100)
    assert set_.base.status == "killed"
    assert set_.base.previous_status == "inactive"
    assert set_.base.pending == PendingEvent("remove", 105)
    assert later == ScheduleEvent(Remove(), 5)


def test_kill_again_resets_the_wait():
    killed = base("killed", pending=PendingEvent("remove", 200))
    set_, later = transition(killed, KillAction(0), 100)
    assert later.delay_secs == 0 and set_.base.pending.due_secs == 100


def test_rebalance_remembers_previous_status_and_new_sizes():
    set_, later = transition(base("inactive"), RebalanceAction(3, 4, (("a", 5),)), 10)
    assert set_.base.status == "rebalancing"
    assert set_.base.previous_status == "inactive"
    assert set_.base.num_workers == 4 and set_.base.component_executors == {"a": 5, "b": 1}
    assert later == ScheduleEvent(DoRebalance(), 3)


def test_do_rebalance_reassigns_from_scratch_and_restores_status():
    rebalancing = base("rebalancing", previous_status="inactive")
    reassign, set_ = transition(rebalancing, DoRebalance(), 0)
    assert reassign == Reassign(scratch=True)
    assert set_.base.status == "inactive" and set_.base.pending is None


def test_monitor_only_for_active_and_inactive():
    assert transition(base("active"), Monitor(), 0) == [Reassign(scratch=False)]
    assert transition(base("inactive"), Monitor(), 0) == [Reassign(scratch=False)]
    assert transition(base("killed"), Monitor(), 0) == []
    assert transition(base("rebalancing"), Monitor(), 0) == []


def test_startup_resumes_delayed_events_with_remaining_time():
    killed = base("killed", pending=PendingEvent("remove", 130))
    assert transition(killed, Startup(), 100) == [ScheduleEvent(Remove(), 30)]
    overdue = base("rebalancing", pending=PendingEvent("do-rebalance", 50))
    assert transition(overdue, Startup(), 100) == [ScheduleEvent(DoRebalance(), 0)]
    assert transition(base("active"), Startup(), 100) == []


@pytest.mark.parametrize("due", [1e13, float("inf"), float("nan"), -float("inf")])
def test_a_due_time_no_nimbus_writes_fires_at_once_instead_of_failing_the_lead(due):
    """Scheduling 1e13 s ahead raised OverflowError in BecameLeader: every nimbus failed to
    take the lead, one after the other."""
    odd = base("killed", pending=PendingEvent("remove", due))
    assert transition(odd, Startup(), 100) == [ScheduleEvent(Remove(), 0)]


def test_the_longest_wait_thrift_can_ask_for_is_kept_and_one_second_more_fires_at_once():
    """The bound is Thrift's i32 wait_secs, 2**31 - 1: a due time at it is a real wait."""
    at_bound = base("killed", pending=PendingEvent("remove", 100 + 2**31 - 1))
    assert transition(at_bound, Startup(), 100) == [ScheduleEvent(Remove(), 2**31 - 1)]
    past = base("killed", pending=PendingEvent("remove", 100 + 2**31))
    assert transition(past, Startup(), 100) == [ScheduleEvent(Remove(), 0)]


def test_remove_only_removes_killed_topologies():
    assert transition(base("killed"), Remove(), 0) == [RemoveNow()]
    assert transition(base("active"), Remove(), 0) == []  # stale event: ignored


@pytest.mark.parametrize(
    "status,event",
    [
        ("killed", ActivateAction()),
        ("killed", DeactivateAction()),
        ("killed", RebalanceAction(0)),
        ("rebalancing", ActivateAction()),
        ("rebalancing", RebalanceAction(0)),
    ],
)
def test_illegal_user_transitions_raise(status, event):
    with pytest.raises(IllegalTransition, match="wc"):
        transition(base(status), event, 0)


def test_deactivate_of_an_inactive_topology_writes_nothing():
    assert transition(base("inactive"), DeactivateAction(), 0) == []


@pytest.mark.parametrize("event", [KillAction(-5), RebalanceAction(-5)])
def test_a_negative_wait_counts_as_no_wait(event):
    set_, later = transition(base("active"), event, 100)
    assert set_.base.pending.due_secs == 100
    assert later.delay_secs == 0


def test_kill_during_a_rebalance_keeps_the_status_to_restore():
    rebalancing = base("rebalancing", previous_status="inactive")
    set_, _ = transition(rebalancing, KillAction(5), 0)
    assert set_.base.status == "killed" and set_.base.previous_status == "inactive"


@pytest.mark.parametrize(
    "status,event",
    [
        ("active", DoRebalance()),
        ("inactive", DoRebalance()),
        ("killed", DoRebalance()),
        ("inactive", Remove()),
        ("rebalancing", Remove()),
        ("killed", Monitor()),
    ],
)
def test_late_system_events_do_nothing(status, event):
    assert transition(base(status, previous_status="active"), event, 0) == []


# --- the table as a property: any sequence of events ------------------------------------

events = st.one_of(
    st.just(ActivateAction()),
    st.just(DeactivateAction()),
    st.builds(KillAction, st.integers(-5, 30)),
    st.builds(RebalanceAction, st.integers(-5, 30), st.one_of(st.none(), st.integers(1, 8))),
    st.just(DoRebalance()),
    st.just(Monitor()),
    st.just(Startup()),
    st.just(Remove()),
)


@settings(max_examples=200, deadline=None)
@given(st.sampled_from(["active", "inactive"]), st.lists(st.tuples(events, st.integers(0, 50))))
def test_any_event_sequence_keeps_the_table(start, steps):
    """previous_status only ever names a status to go back to; a delayed event is due
    `max(0, wait)` after it was asked for; a status write only when the status changes."""
    current, now = base(start), 0
    for event, dt in steps:
        now += dt
        status = current.status
        try:
            out = transition(current, event, now)
        except IllegalTransition:
            assert status in ("killed", "rebalancing") and not isinstance(event, KillAction)
            continue
        assert isinstance(out, list)
        writes = [i.base for i in out if isinstance(i, SetBase)]
        for new in writes:
            assert new.previous_status in (None, "active", "inactive")
            assert new.status != status or isinstance(event, KillAction)
            current = new
        if isinstance(event, KillAction | RebalanceAction) and writes:
            assert current.pending.due_secs == now + max(0, event.wait_secs)
            if status in ("active", "inactive"):
                assert current.previous_status == status
        if isinstance(event, DoRebalance) and status == "rebalancing":
            assert out[0] == Reassign(scratch=True) and current.pending is None
            assert current.status in ("active", "inactive")
        if RemoveNow() in out:
            assert status == "killed"
            break


def test_idempotent_status_changes_and_late_system_events_do_nothing():
    assert transition(base("inactive"), DeactivateAction(), 0) == []
    assert transition(base("active"), ActivateAction(), 0) == []
    assert transition(base("active"), DoRebalance(), 0) == []  # the rebalance already ran
    assert transition(base("active"), Remove(), 0) == []


def test_a_negative_wait_is_no_wait():
    set_, schedule = transition(base(), KillAction(-5), 100)
    assert set_.base.pending == PendingEvent("remove", 100)
    assert schedule == ScheduleEvent(Remove(), 0)


def test_the_table_is_storms_every_status_takes_kill_and_startup_and_only_alive_ones_user_actions():
    from squall.nimbus.core.states import TRANSITIONS, TopologyStatus

    assert set(TRANSITIONS) == set(TopologyStatus)
    for status, row in TRANSITIONS.items():
        assert KillAction in row and Startup in row
        alive = status in (TopologyStatus.ACTIVE, TopologyStatus.INACTIVE)
        assert (ActivateAction in row) == alive and (RebalanceAction in row) == alive
    assert set(TRANSITIONS[TopologyStatus.KILLED]) == {KillAction, Startup, Remove}
    assert set(TRANSITIONS[TopologyStatus.REBALANCING]) == {KillAction, Startup, DoRebalance}


def test_a_user_action_a_status_does_not_take_says_which():
    with pytest.raises(IllegalTransition, match="cannot rebalance topology 'wc': it is killed"):
        transition(base("killed"), RebalanceAction(0), 0)
    assert transition(base("active"), Remove(), 0) == []  # a late system action: nothing


def test_the_docs_show_the_table_as_it_is():
    from pathlib import Path

    from squall.nimbus.core.states import table_markdown

    text = (Path(__file__).resolve().parents[2] / "docs" / "architecture.md").read_text()
    shown = text.split("<!-- begin states table")[1].split("-->\n", 1)[1]
    assert shown.split("<!-- end states table -->")[0] == table_markdown()
