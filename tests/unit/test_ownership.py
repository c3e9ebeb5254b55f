"""Every cell of the partition ownership decision table: a change of any one transition
fails here. The rules that matter most: read only while OWNED; stop at once on SUSPENDED;
after LOST claim again and reload the position; delete the owner node on release."""

import pytest
from hypothesis import given
from hypothesis import strategies as st

from squall.recipes import ownership as o
from squall.recipes.ownership import Ownership as S

W, OWN, SUS, LOST, REL = S.WAITING, S.OWNED, S.SUSPENDED, S.LOST, S.RELEASED
CLAIM, WATCH, DELETE = o.TryClaim(), o.WatchOwner(), o.DeleteOwner()
START, RESUME, STOP, DROP = o.StartReading(), o.ResumeReading(), o.StopReading(), o.DropPosition()

TABLE = {
    W: {
        o.ClaimWon(): (OWN, (WATCH, START)),
        o.ClaimRefused(): (W, (WATCH,)),
        o.OwnerGone(): (W, (CLAIM,)),
        o.Suspended(): (W, ()),
        o.Reconnected(): (W, (CLAIM,)),
        o.SessionLost(): (W, ()),
        o.Fenced(): (W, ()),
        o.Release(): (REL, ()),
    },
    OWN: {
        o.ClaimWon(): (OWN, ()),
        o.ClaimRefused(): (OWN, ()),
        o.OwnerGone(): (W, (STOP, DROP, CLAIM)),
        o.Suspended(): (SUS, (STOP,)),
        o.Reconnected(): (OWN, ()),
        o.SessionLost(): (LOST, (STOP, DROP)),
        o.Fenced(): (W, (STOP, DROP, CLAIM)),
        o.Release(): (REL, (STOP, DELETE)),
    },
    SUS: {
        o.ClaimWon(): (SUS, ()),
        o.ClaimRefused(): (SUS, ()),
        o.OwnerGone(): (W, (DROP, CLAIM)),
        o.Suspended(): (SUS, ()),
        o.Reconnected(): (OWN, (WATCH, RESUME)),
        o.SessionLost(): (LOST, (DROP,)),
        o.Fenced(): (W, (DROP, CLAIM)),
        o.Release(): (REL, (DELETE,)),
    },
    LOST: {
        o.ClaimWon(): (LOST, ()),
        o.ClaimRefused(): (LOST, ()),
        o.OwnerGone(): (LOST, ()),
        o.Suspended(): (LOST, ()),
        o.Reconnected(): (W, (CLAIM,)),
        o.SessionLost(): (LOST, ()),
        o.Fenced(): (LOST, ()),
        o.Release(): (REL, ()),
    },
    REL: {event: (REL, ()) for event in (
        o.ClaimWon(), o.ClaimRefused(), o.OwnerGone(), o.Suspended(),
        o.Reconnected(), o.SessionLost(), o.Fenced(), o.Release(),
    )},
}  # fmt: skip

CELLS = [(state, event, want) for state, row in TABLE.items() for event, want in row.items()]


@pytest.mark.parametrize(("state", "event", "want"), CELLS, ids=lambda v: repr(v))
def test_each_transition(state, event, want):
    assert o.step(state, event) == want


def test_the_table_covers_every_state_and_event():
    events = {type(e) for e in TABLE[W]}
    assert set(TABLE) == set(S)
    assert events == set(o.Event.__args__)
    assert all({type(e) for e in row} == events for row in TABLE.values())


def test_a_task_starts_waiting_and_claims():
    assert o.START == (W, (CLAIM,))


@pytest.mark.parametrize("state", list(S))
def test_only_an_owner_may_read(state):
    assert o.may_read(state) is (state is OWN)


@pytest.mark.parametrize("state", list(S))
def test_an_unknown_event_raises(state):
    with pytest.raises(TypeError, match="unknown ownership event"):
        o.step(state, "Suspended")


def test_an_unknown_state_raises():
    with pytest.raises(ValueError, match="unknown ownership state"):
        o.step("OWNED", o.ClaimWon())


EVENTS = st.sampled_from([e for e in TABLE[W]])


@given(st.lists(EVENTS, max_size=30))
def test_reading_starts_only_with_a_fresh_or_kept_position(events):
    """Along any run of events: StartReading (reload the committed offset) comes only with a
    won claim, ResumeReading only straight after a suspension within the session, and after a
    lost session nothing is read before the position was dropped and reloaded."""
    state, dropped_since_start = W, True
    for event in events:
        before = state
        state, todo = o.step(state, event)
        if START in todo:
            assert isinstance(event, o.ClaimWon) and before is W and dropped_since_start
            dropped_since_start = False
        if RESUME in todo:
            assert before is SUS and isinstance(event, o.Reconnected)
        if DROP in todo:
            dropped_since_start = True
        if o.may_read(state):
            assert not dropped_since_start
