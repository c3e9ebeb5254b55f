"""A supervisor slot's transitions (supervisor/slot.py): each test pins the state and the
instruction list a step returns, so a change of any transition fails one of them."""

import logging
import random
from dataclasses import replace

import pytest

from squall.processes import WORKER_REASSIGNED, WORKER_RESTART_ASKED
from squall.supervisor.backoff import Retry
from squall.supervisor.slot import (
    Assigned,
    BeatSeen,
    CodeReady,
    ConfFetched,
    Exited,
    FetchCode,
    FetchConf,
    Killed,
    KillWorker,
    Log,
    OverMemory,
    RemoveCode,
    ReportError,
    Slot,
    SlotState,
    StartFailed,
    StartWorker,
    Tick,
    Timeouts,
    code_to_remove,
    empty_slot,
    retries,
    step,
    worker_key,
)
from squall.supervisor.sync import WorkerSpec

S = SlotState
PORT = 6700
KEY = ("t", PORT)
SPEC = WorkerSpec("t", PORT, (1, 2), 10)
CONF = {"topology.name": "t"}
TIMEOUTS = Timeouts(worker=30, start=120)
WARN, INFO = logging.WARNING, logging.INFO


def running(now: float = 100.0, retry: Retry | None = None) -> Slot:
    """A slot whose worker for SPEC started at `now` and beat once right after."""
    slot = Slot(PORT, TIMEOUTS, S.RUNNING, SPEC, SPEC, now, 0.0, retry, (1, now + 1))
    return slot


def test_an_assignment_makes_an_empty_slot_wait_for_its_code():
    slot, out = step(empty_slot(PORT, TIMEOUTS), Assigned(SPEC), 5.0)
    assert slot.state is S.WAITING_FOR_CODE and slot.desired == SPEC
    assert out == [FetchCode("t")]
    assert step(slot, Assigned(SPEC), 6.0) == (slot, [])  # the same again: nothing


def test_no_assignment_leaves_an_empty_slot_empty():
    slot = empty_slot(PORT, TIMEOUTS)
    assert step(slot, Assigned(None), 1.0) == (slot, [])
    assert step(slot, Tick(), 1.0) == (slot, [])


def test_code_ready_asks_for_a_conf_from_now_on():
    waiting, _ = step(empty_slot(PORT, TIMEOUTS), Assigned(SPEC), 5.0)
    slot, out = step(waiting, CodeReady(), 7.0)
    assert slot.state is S.WAITING_FOR_CONF and slot.since == 7.0
    assert out == [FetchConf("t")]
    assert step(empty_slot(PORT, TIMEOUTS), CodeReady(), 7.0)[1] == []


def test_a_waiting_slot_asks_again_each_tick():
    waiting, _ = step(empty_slot(PORT, TIMEOUTS), Assigned(SPEC), 5.0)
    assert step(waiting, Tick(), 6.0) == (waiting, [FetchCode("t")])
    conf_wait, _ = step(waiting, CodeReady(), 7.0)
    assert step(conf_wait, Tick(), 8.0) == (conf_wait, [FetchConf("t")])


def test_only_a_conf_asked_for_since_the_start_became_possible_starts_the_worker():
    waiting, _ = step(empty_slot(PORT, TIMEOUTS), Assigned(SPEC), 5.0)
    conf_wait, _ = step(waiting, CodeReady(), 7.0)
    assert step(conf_wait, ConfFetched(6.9, CONF), 8.0) == (conf_wait, [])  # maybe stale
    slot, out = step(conf_wait, ConfFetched(7.0, CONF), 8.0)
    assert slot.state is S.STARTING and slot.worker == SPEC and slot.started_at == 8.0
    assert out == [StartWorker(SPEC, CONF)]
    assert step(waiting, ConfFetched(9.0, CONF), 9.0) == (waiting, [])  # no code yet


def test_a_start_that_raises_is_an_error_and_backs_off():
    starting = Slot(PORT, TIMEOUTS, S.STARTING, SPEC, SPEC, 8.0)
    slot, out = step(starting, StartFailed("no user"), 8.0)
    text = "cannot start worker t:6700: no user"
    assert slot.state is S.BACKING_OFF and slot.worker is None
    assert slot.retry == Retry(1, 9.0)
    assert out == [Log(WARN, text), ReportError("t", PORT, f"{text}\n(restarting in 1s)")]
    assert step(running(), StartFailed("late"), 9.0) == (running(), [])


def test_the_first_changed_beat_makes_a_starting_worker_running():
    starting = Slot(PORT, TIMEOUTS, S.STARTING, SPEC, SPEC, 8.0, beat=(9, 3.0))
    assert step(starting, BeatSeen(9), 10.0) == (starting, [])  # an earlier incarnation's
    slot, out = step(starting, BeatSeen(1), 10.0)
    assert slot.state is S.RUNNING and slot.beat == (1, 10.0) and out == []
    assert step(slot, BeatSeen(1), 20.0)[0].beat == (1, 10.0)  # unchanged: first time kept
    assert step(slot, BeatSeen(2), 20.0)[0].beat == (2, 20.0)
    idle = empty_slot(PORT, TIMEOUTS)
    assert step(idle, BeatSeen(3), 20.0) == (idle, [])


def test_a_crash_is_reported_with_its_back_off_and_the_slot_waits():
    slot, out = step(running(), Exited(1, 50.0, "worker t:6700 exited with code 1"), 150.0)
    assert slot.state is S.BACKING_OFF and slot.worker is None
    assert slot.retry == Retry(1, 151.0)
    text = "worker t:6700 exited with code 1"
    assert out == [Log(WARN, text), ReportError("t", PORT, f"{text}\n(restarting in 1s)")]


def test_crashes_in_a_row_double_the_back_off_and_a_long_run_resets_it():
    slot, out = step(running(retry=Retry(3, 90.0)), Exited(1, 10.0, "x"), 150.0)
    assert slot.retry == Retry(4, 158.0) and out[1] == ReportError(
        "t", PORT, "x\n(restarting in 8s)"
    )
    healthy, _ = step(running(retry=Retry(3, 90.0)), Exited(1, 60.0, "x"), 150.0)
    assert healthy.retry == Retry(1, 151.0)


def test_a_backed_off_slot_waits_for_its_code_once_the_delay_has_passed():
    backing = Slot(PORT, TIMEOUTS, S.BACKING_OFF, SPEC, retry=Retry(1, 151.0))
    assert step(backing, Tick(), 150.9) == (backing, [])
    slot, out = step(backing, Tick(), 151.0)
    assert slot.state is S.WAITING_FOR_CODE and slot.retry == Retry(1, 151.0)
    assert out == [FetchCode("t")]


def test_a_worker_that_stopped_for_its_new_assignment_did_not_fail():
    moved = WorkerSpec("t", PORT, (1,), 10)
    slot, _ = step(running(), Assigned(moved), 150.0)
    assert slot.state is S.RUNNING and slot.desired == moved  # kept until the tick
    for code in (0, WORKER_REASSIGNED):
        ended, out = step(slot, Exited(code, 50.0, "x"), 150.0)
        assert ended.state is S.WAITING_FOR_CODE and ended.retry is None
        assert out == [Log(INFO, "worker t:6700 stopped: its assignment changed"), FetchCode("t")]


def test_a_worker_whose_topology_went_did_not_fail():
    slot, _ = step(running(retry=Retry(2, 1.0)), Assigned(None), 150.0)
    ended, out = step(slot, Exited(0, 50.0, "x"), 150.0)
    assert ended == replace(empty_slot(PORT, TIMEOUTS))
    assert out == [Log(INFO, "worker t:6700 stopped: its assignment changed")]


def test_a_worker_that_asked_to_restart_starts_again_without_back_off():
    slot, out = step(running(), Exited(WORKER_RESTART_ASKED, 50.0, "x"), 150.0)
    assert slot.state is S.WAITING_FOR_CODE and slot.retry is None
    assert out == [Log(INFO, "worker t:6700 restarting on request"), FetchCode("t")]


def test_a_worker_reassigned_by_an_assignment_not_taken_here_backs_off_silently():
    slot, out = step(running(), Exited(WORKER_REASSIGNED, 50.0, "x"), 150.0)
    assert slot.state is S.BACKING_OFF and slot.retry == Retry(1, 151.0)
    assert out == [Log(INFO, "worker t:6700 stopped for an assignment not taken here")]


def test_exit_zero_while_still_wanted_is_a_failure():
    slot, out = step(running(), Exited(0, 50.0, "x"), 150.0)
    assert slot.state is S.BACKING_OFF
    assert out == [Log(WARN, "x"), ReportError("t", PORT, "x\n(restarting in 1s)")]


def test_a_crash_after_the_slot_went_to_another_topology_does_not_hold_it_back():
    other = WorkerSpec("u", PORT, (5,), 1)
    slot, _ = step(running(retry=Retry(4, 0.0)), Assigned(other), 150.0)
    assert slot.retry is None  # the back-off was t's
    ended, out = step(slot, Exited(1, 50.0, "x"), 150.0)
    assert ended.state is S.WAITING_FOR_CODE and ended.retry is None
    assert out == [Log(WARN, "x"), ReportError("t", PORT, "x\n(restarting in 1s)"), FetchCode("u")]


def test_a_worker_over_memory_is_killed_at_once_reported_and_backs_off():
    slot, out = step(running(), OverMemory("over its memory limit"), 150.0)
    assert slot.state is S.STOPPING and slot.retry == Retry(1, 151.0)
    assert out == [
        Log(WARN, "worker t:6700: over its memory limit"),
        KillWorker(KEY, 0),
        ReportError("t", PORT, "over its memory limit\n(restarting in 1s)"),
    ]
    after, out = step(slot, Killed(), 150.0)
    assert after.state is S.BACKING_OFF and after.worker is None and out == []
    idle = empty_slot(PORT, TIMEOUTS)
    assert step(idle, OverMemory("x"), 1.0) == (idle, [])


def test_a_hung_worker_is_killed_with_a_second_of_grace_and_reported():
    slot = replace(running(now=0.0), timeouts=Timeouts(worker=30, start=5))  # beat at 1
    assert step(slot, Tick(), 31.0) == (slot, [])  # 30 s since its beat: not yet
    hung, out = step(slot, Tick(), 31.5)
    text = "worker t:6700 stopped heartbeating; restarted"
    assert hung.state is S.STOPPING and hung.retry == Retry(1, 32.5)
    assert out == [
        Log(WARN, "worker t:6700 stopped heartbeating; restarting it"),
        KillWorker(KEY, 1),
        ReportError("t", PORT, f"{text}\n(restarting in 1s)"),
    ]
    assert step(running(now=0.0), Tick(), 120.0)[1] == []  # within its start grace


def test_a_starting_worker_has_its_start_grace():
    starting = Slot(PORT, TIMEOUTS, S.STARTING, SPEC, SPEC, 100.0)
    assert step(starting, Tick(), 220.0) == (starting, [])
    assert step(starting, Tick(), 220.5)[1][1] == KillWorker(KEY, 1)


def test_a_beat_from_before_the_start_does_not_count():
    starting = Slot(PORT, TIMEOUTS, S.STARTING, SPEC, SPEC, 100.0, beat=(9, 99.0))
    assert step(starting, Tick(), 220.5)[0].state is S.STOPPING


def test_no_worker_is_hung_while_zookeeper_is_away_and_each_gets_a_timeout_after():
    """Beats travel through ZooKeeper: an outage longer than the timeout stopped every
    worker of every supervisor as soon as the supervisor read their beats again."""
    slot = replace(running(now=0.0), timeouts=Timeouts(worker=30, start=5))  # beat at 1
    assert step(slot, Tick(zookeeper_away=True), 100.0) == (slot, [])
    assert step(slot, Tick(zookeeper_back=100.0), 130.0) == (slot, [])
    assert step(slot, Tick(zookeeper_back=100.0), 130.5)[0].state is S.STOPPING


def test_zookeeper_coming_back_after_a_start_gives_a_silent_worker_a_new_timeout():
    silent = Slot(PORT, Timeouts(30, 5), S.STARTING, SPEC, SPEC, 100.0)
    assert step(silent, Tick(zookeeper_back=150.0), 180.0) == (silent, [])
    assert step(silent, Tick(zookeeper_back=150.0), 180.5)[0].state is S.STOPPING
    beat_later = replace(silent, state=S.RUNNING, beat=(3, 170.0))  # after the return
    assert step(beat_later, Tick(zookeeper_back=150.0), 199.0) == (beat_later, [])


def test_a_worker_started_after_zookeeper_came_back_is_judged_as_before():
    starting = Slot(PORT, Timeouts(30, 20), S.STARTING, SPEC, SPEC, 60.0)
    assert step(starting, Tick(zookeeper_back=50.0), 91.0)[0].state is S.STOPPING


def test_a_worker_no_longer_wanted_as_started_is_stopped_on_the_tick():
    changed = WorkerSpec("t", PORT, (1, 2), 99)  # a task restarted in place
    slot, _ = step(running(), Assigned(changed), 150.0)
    stopping, out = step(slot, Tick(), 150.0)
    assert stopping.state is S.STOPPING and out == [KillWorker(KEY, 5)]
    after, out = step(stopping, Killed(), 150.0)
    assert after.state is S.WAITING_FOR_CODE and after.worker is None
    assert out == [FetchCode("t")]
    gone, _ = step(running(), Assigned(None), 150.0)
    stopping, out = step(gone, Tick(), 150.0)
    assert out == [KillWorker(KEY, 5)]
    assert step(stopping, Killed(), 150.0) == (empty_slot(PORT, TIMEOUTS), [])


def test_a_running_worker_whose_own_tasks_stayed_runs_on_when_others_move():
    """A lost host's tasks moved elsewhere: the assignment is rewritten, this port's worker
    is wanted as it was started (same tasks, same newest start), so nothing happens to it;
    it re-routes itself (worker/lifecycle.py)."""
    slot, out = step(running(), Assigned(WorkerSpec("t", PORT, (1, 2), 10)), 150.0)
    assert slot == running() and out == []
    assert step(slot, Tick(), 150.0) == (running(), [])


def test_a_running_worker_given_more_tasks_is_restarted():
    """As Storm 2's Slot: a worker whose executors changed is stopped and started again
    (squall adopts no task into a running worker)."""
    grown = WorkerSpec("t", PORT, (1, 2, 3), 10)
    slot, _ = step(running(), Assigned(grown), 150.0)
    stopping, out = step(slot, Tick(), 150.0)
    assert stopping.state is S.STOPPING and out == [KillWorker(KEY, 5)]


def test_an_unwanted_worker_is_stopped_not_reported_even_when_hung():
    gone, _ = step(running(now=0.0), Assigned(None), 500.0)
    assert step(gone, Tick(), 500.0)[1] == [KillWorker(KEY, 5)]


def test_a_stop_waits_for_killed_and_ignores_the_rest():
    unwanted = replace(running(now=0.0), state=S.STOPPING, desired=None)
    replaced = replace(running(now=0.0), state=S.STOPPING)  # hung: SPEC is still wanted
    others = (Tick(), CodeReady(), BeatSeen(7), Exited(1, 1.0, "x"), OverMemory("x"))
    for stopping in (unwanted, replaced):
        for event in (*others, StartFailed("x"), ConfFetched(500.0, CONF)):
            assert step(stopping, event, 500.0) == (stopping, [])


def test_killed_means_nothing_to_a_slot_that_is_not_stopping():
    for slot in (running(), empty_slot(PORT, TIMEOUTS), Slot(PORT, TIMEOUTS, S.BACKING_OFF, SPEC)):
        assert step(slot, Killed(), 150.0) == (slot, [])


def test_another_topology_on_a_waiting_slot_starts_over_without_the_old_back_off():
    other = WorkerSpec("u", PORT, (5,), 1)
    conf_wait = Slot(PORT, TIMEOUTS, S.WAITING_FOR_CONF, SPEC, since=7.0, retry=Retry(2, 0.0))
    slot, out = step(conf_wait, Assigned(other), 9.0)
    assert slot.state is S.WAITING_FOR_CODE and slot.retry is None and slot.since == 0.0
    assert out == [FetchCode("u")]
    retasked = WorkerSpec("t", PORT, (7,), 10)
    slot, out = step(conf_wait, Assigned(retasked), 9.0)
    assert slot.state is S.WAITING_FOR_CONF and slot.desired == retasked and out == []


def test_an_unassigned_slot_backing_off_or_waiting_empties():
    backing = Slot(PORT, TIMEOUTS, S.BACKING_OFF, SPEC, retry=Retry(1, 151.0))
    assert step(backing, Assigned(None), 150.0) == (empty_slot(PORT, TIMEOUTS), [])
    waiting = Slot(PORT, TIMEOUTS, S.WAITING_FOR_CONF, SPEC, since=3.0)
    assert step(waiting, Assigned(None), 150.0) == (empty_slot(PORT, TIMEOUTS), [])


def test_a_backing_off_slot_given_another_topology_starts_it_at_once():
    backing = Slot(PORT, TIMEOUTS, S.BACKING_OFF, SPEC, retry=Retry(3, 500.0))
    other = WorkerSpec("u", PORT, (5,), 1)
    slot, out = step(backing, Assigned(other), 150.0)
    assert slot.state is S.WAITING_FOR_CODE and slot.retry is None and out == [FetchCode("u")]
    same, out = step(backing, Assigned(WorkerSpec("t", PORT, (9,), 10)), 150.0)
    assert same.state is S.BACKING_OFF and same.retry == Retry(3, 500.0) and out == []


def test_a_starting_worker_that_crashes_or_grows_is_a_failure_too():
    starting = Slot(PORT, TIMEOUTS, S.STARTING, SPEC, SPEC, 8.0)
    crashed, out = step(starting, Exited(1, 2.0, "x"), 10.0)
    assert crashed.state is S.BACKING_OFF and crashed.retry == Retry(1, 11.0)
    assert out == [Log(WARN, "x"), ReportError("t", PORT, "x\n(restarting in 1s)")]
    grown, out = step(starting, OverMemory("big"), 10.0)
    assert grown.state is S.STOPPING and out[1] == KillWorker(KEY, 0)


def test_the_worker_key_is_there_while_a_worker_runs():
    assert worker_key(running()) == KEY
    assert worker_key(Slot(PORT, TIMEOUTS, S.STARTING, SPEC, SPEC, 8.0)) == KEY
    assert worker_key(replace(running(), state=S.STOPPING)) is None
    assert worker_key(Slot(PORT, TIMEOUTS, S.WAITING_FOR_CODE, SPEC)) is None


def test_an_unknown_event_is_a_type_error():
    with pytest.raises(TypeError):
        step(empty_slot(PORT, TIMEOUTS), object(), 0.0)  # type: ignore[arg-type]


def test_code_is_removed_when_no_slot_wants_or_runs_it_and_no_download_writes_it():
    stopping_old = replace(running(), state=S.STOPPING, desired=None)
    waiting = Slot(6701, TIMEOUTS, S.WAITING_FOR_CODE, WorkerSpec("w", 6701, (1,), 0))
    slots = [stopping_old, waiting, empty_slot(6702, TIMEOUTS)]
    present = ["t", "w", "gone", "busy"]
    assert code_to_remove(slots, present, lambda tid: tid == "busy") == [RemoveCode("gone")]
    assert retries([running(retry=Retry(1, 5.0)), waiting]) == [Retry(1, 5.0)]


# --- a property over random event sequences ---

EVENTS = [
    Assigned(SPEC),
    Assigned(WorkerSpec("t", PORT, (1,), 11)),
    Assigned(WorkerSpec("u", PORT, (3,), 1)),
    Assigned(None),
    CodeReady(),
    ConfFetched(0.0, CONF),
    StartFailed("x"),
    BeatSeen(1),
    BeatSeen(2),
    Exited(1, 5.0, "crash"),
    Exited(1, 90.0, "crash after a long run"),
    Exited(0, 5.0, "done"),
    Exited(WORKER_REASSIGNED, 5.0, "moved"),
    Exited(WORKER_RESTART_ASKED, 5.0, "again"),
    OverMemory("big"),
    Tick(),
]


def test_random_sequences_keep_one_worker_report_each_failure_once_and_back_off_growing():
    """The shell's answers are modelled: a KillWorker is answered Killed, a conf is the
    newest. A slot never starts a second worker before its first ended; each failure is
    reported once; the back-off never shrinks between failures of a worker that ran
    briefly; and a slot without a worker has no worker spec."""
    rng = random.Random(38)
    for _ in range(300):
        slot, now, alive = empty_slot(PORT, TIMEOUTS), 0.0, False
        for _ in range(60):
            now += rng.choice([0.0, 0.5, 2.0, 40.0])
            event = rng.choice(EVENTS)
            if isinstance(event, ConfFetched):
                event = ConfFetched(now, CONF)
            before = slot
            pending = [event]
            while pending:
                slot, out = step(slot, pending.pop(0), now)
                starts = [i for i in out if isinstance(i, StartWorker)]
                kills = [i for i in out if isinstance(i, KillWorker)]
                if isinstance(event, (Exited, StartFailed)) and before.state in (
                    S.STARTING,
                    S.RUNNING,
                ):
                    alive = False
                if kills:
                    alive = False
                    pending.append(Killed())
                assert not (starts and alive), "a second worker while one runs"
                alive = alive or bool(starts)
                reports = [i for i in out if isinstance(i, ReportError)]
                assert len(reports) <= 1
                if reports:
                    assert before.state in (S.STARTING, S.RUNNING)
                    if isinstance(event, Exited) and event.ran_for >= 60 and slot.retry:
                        assert slot.retry.failures == 1  # a long healthy run resets it
                    if before.retry and slot.retry and before.worker == slot.desired:
                        assert slot.retry.failures >= before.retry.failures
                        assert slot.retry.not_before > now
                before = slot
            assert (slot.worker is not None) == (slot.state in (S.STARTING, S.RUNNING))
