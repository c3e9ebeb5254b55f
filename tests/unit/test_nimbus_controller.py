"""The controller shell refuses what it does not know and what another epoch decided; the
ZooKeeper side of fencing is tested against a real server in test_fault_tolerance."""

from types import SimpleNamespace

import pytest

from squall.config import load_defaults
from squall.nimbus.cluster_state import FencedOut
from squall.nimbus.controller import Controller
from squall.nimbus.controller_jobs import Decide
from squall.nimbus.core import instructions as ins
from squall.nimbus.core.instructions import AppendLog, WriteAssignment, WriteBase
from squall.nimbus.instruction_runner import batches
from squall.records import Assignment, StormBase
from squall.structure import assign_task_ids


def controller(epoch=5, written=None):
    state = SimpleNamespace(epoch=epoch, write_base=lambda tid, base: written.append(tid))
    code = SimpleNamespace(store=None)
    return Controller(load_defaults(), state, inbox=None, code=code, later=None)


def test_an_unknown_instruction_raises():
    with pytest.raises(TypeError, match="unknown nimbus instruction"):
        controller().runner.run(object())


def test_an_instruction_of_another_epoch_is_fenced_out():
    written = []
    shell = controller(epoch=5, written=written)
    base = StormBase("t", "active", 0, 1, {})
    with pytest.raises(FencedOut):
        shell.runner.run(ins.WriteBase("t-1", base, 4))
    shell.runner.run(ins.WriteBase("t-1", base, 5))
    assert written == ["t-1"]


def test_an_unknown_job_fails_its_caller_and_the_loop_goes_on():
    shell = controller()
    shell.start()
    try:
        with pytest.raises(TypeError, match="unknown controller job"):
            shell.call(object(), timeout=10)
        with pytest.raises(TypeError, match="no decision"):
            shell.call(Decide(object()), timeout=10)
    finally:
        shell.stop()
        shell.thread.join(10)
    assert not shell.thread.is_alive()


def test_a_decision_carried_out_in_part_leaves_zookeepers_view_not_the_old_model():
    from squall.nimbus.core import events as ev
    from squall.nimbus.core.model import NimbusModel, NimbusSettings, TopologyModel

    active = StormBase("t", "active", 0, 1, {"a": 1})
    killed = StormBase("t", "killed", 0, 1, {"a": 1})
    zookeeper = {"t-1": active}

    def write_base(tid, base):
        zookeeper[tid] = base

    def numbered(base):
        return assign_task_ids(base.component_executors)

    state = SimpleNamespace(
        epoch=2,
        write_base=write_base,
        read_bases=lambda: dict(zookeeper),
        read_assignments=lambda: {},
        read_supervisors=lambda: {},
        read_tasks=lambda tids: {
            t: assign_task_ids(zookeeper[t].component_executors) for t in tids
        },
        check_lead=lambda: None,
    )
    store = SimpleNamespace(append=lambda *args: (_ for _ in ()).throw(OSError("store down")))
    timers = []
    code = SimpleNamespace(store=store)
    shell = Controller(load_defaults(), state, None, code, later=lambda *a: timers.append(a))
    topology = TopologyModel("t-1", active, {1: "a"}, conf={"k": 1})
    shell.model = NimbusModel(
        NimbusSettings.from_conf(load_defaults()), {"t-1": topology}, epoch=2, leading=True
    )
    with pytest.raises(OSError):  # WriteBase done, the kill's log message not
        shell._decide(ev.Kill("t", 0, 100.0))
    assert shell.model.topologies["t-1"].base.status == killed.status
    assert shell.model.topologies["t-1"].conf == {"k": 1}
    assert shell.model.leading and len(timers) == 1


def test_an_upload_waits_for_a_lead_being_taken():
    """A nimbus that has just won the election is still taking the lead (reading ZooKeeper
    and its store) on the controller thread: an upload that arrives then waits for it
    instead of being refused as "not the leader"."""
    import dataclasses
    import time

    from squall.nimbus.controller_jobs import TakeLead

    shell = controller()
    shell.inbox = SimpleNamespace(begin=lambda now, owner: "upload-1")

    def take_lead():  # holds the lead until the upload has queued behind it
        deadline = time.monotonic() + 10
        while shell.jobs.empty() and time.monotonic() < deadline:
            time.sleep(0.01)
        shell.model = dataclasses.replace(shell.model, leading=True)

    shell._take_lead = take_lead
    shell.start()
    try:
        shell.post(TakeLead())
        assert not shell.leading
        assert shell.requests.begin_upload("alice") == "upload-1"
    finally:
        shell.stop()
        shell.thread.join(10)


def test_runs_of_writes_and_of_messages_are_batched_in_order():
    """A lost host's rewrites go as one pipelined batch, its log messages as one commit."""
    base = StormBase("t", "active", 0, 1, {"a": 1})
    w = [WriteAssignment(f"t{i}", Assignment(1, f"t{i}", {}, {}, {}), 1) for i in range(3)]
    m = [AppendLog("assignment", f"t{i}", {}, 1) for i in range(3)]
    b = WriteBase("t", base, 1)
    assert batches([w[0], w[1], m[0], m[1], b, w[2], m[2]]) == [
        [w[0], w[1]],
        [m[0], m[1]],
        [b],
        [w[2]],
        [m[2]],
    ]


def test_a_lost_host_rewrites_and_logs_as_two_batches_and_a_failed_batch_rereads_zookeeper():
    from squall.nimbus.core import events as ev
    from squall.nimbus.core.model import NimbusModel, NimbusSettings, TopologyModel
    from squall.records import SupervisorInfo

    ports = [6700, 6701]
    sups = {"s1": SupervisorInfo("h1", ports, 0), "s2": SupervisorInfo("h2", ports, 0)}
    zookeeper = {
        tid: Assignment(2, tid, {"s1": "h1", "s2": "h2"}, {1: ("s1", p), 2: ("s2", p)}, {})
        for tid, p in (("t-1", 6700), ("t-2", 6701))
    }
    calls = []
    state = SimpleNamespace(
        epoch=2,
        write_assignments=lambda writes: calls.append(("zk", [t for t, _ in writes])),
        check_lead=lambda: None,
        read_bases=lambda: {t: StormBase(t, "active", 0, 2, {"a": 2}) for t in zookeeper},
        read_assignments=lambda: dict(zookeeper),
        read_supervisors=lambda: dict(sups),
        read_tasks=lambda tids: {t: {1: "a", 2: "a"} for t in tids},
    )
    store = SimpleNamespace(append_all=lambda messages: calls.append(("db", len(messages))))
    shell = Controller(load_defaults(), state, None, SimpleNamespace(store=store), later=None)
    topologies = {
        tid: TopologyModel(tid, StormBase(tid, "active", 0, 2, {"a": 2}), {1: "a", 2: "a"}, a)
        for tid, a in zookeeper.items()
    }
    settings = NimbusSettings.from_conf(load_defaults())
    model = NimbusModel(settings, topologies, sups, epoch=2, leading=True)
    lost = ev.SupervisorsChanged(1.0, 1.0, {"s1": sups["s1"]}, {})
    shell.model = model
    shell._decide(lost)
    assert calls == [("zk", ["t-1", "t-2"]), ("db", 2)]  # two batches, not four steps
    assert all(set(t.assignment.node_host) == {"s1"} for t in shell.model.topologies.values())

    def in_part(writes):  # t-1's transaction went through, t-2's did not
        zookeeper["t-1"] = dict(writes)["t-1"]
        raise OSError("connection lost")

    state.write_assignments = in_part
    shell.model = model
    with pytest.raises(OSError):
        shell._decide(lost)
    # nimbus takes ZooKeeper's word for what happened, neither its plan nor its old model
    assert shell.model.topologies["t-1"].assignment == zookeeper["t-1"]
    assert zookeeper["t-1"] != model.topologies["t-1"].assignment
    assert shell.model.topologies["t-2"].assignment == model.topologies["t-2"].assignment


def test_a_timed_transition_whose_writes_fail_fires_again_later():
    """A kill's removal that failed once (ZooKeeper lost its leader for a moment) was
    dropped: nothing fired it again and the topology stayed KILLED until a failover."""
    from squall.nimbus.controller import TIMER_RETRY_SECS
    from squall.nimbus.core import events as ev
    from squall.nimbus.core import states

    timers = []
    shell = Controller(
        load_defaults(),
        SimpleNamespace(epoch=1),
        None,
        SimpleNamespace(store=None),
        later=lambda delay, fire: timers.append((delay, fire)),
    )

    def failing(event):
        raise OSError("ZooKeeper connection lost")

    shell._decide = failing
    shell.start()
    try:
        fired = ev.TimerFired("t-1", states.Remove(), 1.0, 2.0)
        with pytest.raises(OSError):
            shell.call(Decide(fired), timeout=10)
        with pytest.raises(OSError):  # another kind of job is not retried
            shell.call(Decide(ev.Kill("t", 0, 100.0)), timeout=10)
    finally:
        shell.stop()
        shell.thread.join(10)
    assert [delay for delay, _ in timers] == [TIMER_RETRY_SECS]
    posted = []
    shell.post = posted.append
    timers[0][1]()  # the retry fires
    [job] = posted
    assert job.event.topology_id == "t-1" and job.event.event == states.Remove()
