"""Properties of nimbus's decisions over random sequences of events: no slot ever runs two
topologies, a monitor round leaves every running topology on live supervisors only, every
write carries the leader's epoch, a refused event changes nothing, and what ZooKeeper would
hold stays consistent: an assignment names only tasks /tasks holds, and a renumbering of
/tasks restarts every worker of the topology (each worker routes by the map it started with)."""

from hypothesis import given, settings
from hypothesis import strategies as st

from squall import thrift_api as T
from squall.nimbus.core import events as ev
from squall.nimbus.core import instructions as ins
from squall.nimbus.core.decide import handle
from squall.nimbus.core.model import NimbusModel, NimbusSettings
from squall.records import SupervisorInfo, WorkerBeat
from squall.structure import ComponentInfo, GroupingSpec, InputSpec, TopologyStructure
from squall.supervisor.sync import desired_workers

SETTINGS = NimbusSettings(
    task_timeout=5, task_launch=10, message_timeout=3, default_workers=2, default_ackers=None
)
HOSTS = {f"s{i}": SupervisorInfo(f"h{i}", [6700, 6701], 0) for i in range(3)}
NAMES = ["a", "b", "c"]
SHUFFLED = (InputSpec("x", "default", GroupingSpec("shuffle")),)
STRUCTURE = TopologyStructure(  # w's tasks are numbered before x's: resizing w renumbers x
    {
        "w": ComponentInfo("w", "bolt", "m", "B", {}, 1, SHUFFLED, {"default": ("v",)}, {}),
        "x": ComponentInfo("x", "spout", "m", "C", {}, 3, (), {"default": ("v",)}, {}),
    }
)
EPOCH = 4

steps = st.one_of(
    st.tuples(st.just("submit"), st.sampled_from(NAMES), st.integers(0, 3)),
    st.tuples(st.just("kill"), st.sampled_from(NAMES), st.integers(0, 4)),
    st.tuples(st.just("rebalance"), st.sampled_from(NAMES), st.integers(0, 3)),
    st.tuples(st.just("resize"), st.sampled_from(NAMES), st.integers(1, 3)),
    st.tuples(st.just("deactivate"), st.sampled_from(NAMES), st.just(0)),
    st.tuples(st.just("activate"), st.sampled_from(NAMES), st.just(0)),
    st.tuples(st.just("monitor"), st.sets(st.sampled_from(sorted(HOSTS))), st.integers(0, 8)),
    st.tuples(st.just("timers"), st.just(""), st.just(0)),
)


def beats_for(model, seq):
    """Every placed task beats from its slot, with a sequence number that moves."""
    out = {}
    for tid, t in model.topologies.items():
        by_slot = {}
        for task, slot in (t.assignment.task_slots if t.assignment else {}).items():
            by_slot.setdefault(slot, []).append(task)
        out[tid] = {s: WorkerBeat(seq, 0, 0, {x: {} for x in ts}) for s, ts in by_slot.items()}
    return out


def event_for(step, model, clock, timers):
    kind, arg, n = step
    wall = 1000.0 + clock
    if kind == "submit":
        conf = {"topology.workers": n, "topology.acker.executors": 0}
        return ev.Submit(arg, f"{arg}-{clock}", STRUCTURE, conf, "up", False, clock, wall)
    if kind == "kill":
        return ev.Kill(arg, n, wall)
    if kind == "rebalance":
        return ev.Rebalance(arg, 0, n or None, {"x": 2}, wall)
    if kind == "resize":
        return ev.Rebalance(arg, 0, None, {"w": n}, wall)
    if kind == "activate":
        return ev.Activate(arg, wall)
    if kind == "deactivate":
        return ev.Deactivate(arg, wall)
    if kind == "monitor":
        live = {sid: HOSTS[sid] for sid in arg}
        return ev.MonitorTick(clock, wall, live, beats_for(model, int(clock)) if n % 2 else {})
    timer = timers.pop(0) if timers else None
    return ev.TimerFired(timer.topology_id, timer.event, clock, wall) if timer else None


def check_invariants(model, out, step):
    owners = {}
    for tid, t in model.topologies.items():
        for slot in set(t.assignment.task_slots.values()) if t.assignment else ():
            assert owners.setdefault(slot, tid) == tid, f"{slot} runs two topologies"
    for i in out:
        if not isinstance(i, ins.StartTimer):
            assert i.epoch == EPOCH
    if step[0] == "monitor":
        live = {(sid, p) for sid in step[1] for p in HOSTS[sid].ports}
        for t in model.topologies.values():
            if t.base.status in ("active", "inactive") and t.assignment:
                assert set(t.assignment.task_slots.values()) <= live


@settings(max_examples=150, deadline=None)
@given(st.lists(steps, max_size=25))
def test_any_sequence_keeps_slots_exclusive_and_on_live_supervisors(sequence):
    start = ev.BecameLeader(
        EPOCH, frozenset(), frozenset(), {}, {}, HOSTS, frozenset(), {}, (), 0.0, 1000.0
    )
    model, _ = handle(NimbusModel(SETTINGS), start)
    timers: list[ins.StartTimer] = []
    zookeeper: dict = {}
    for clock, step in enumerate(sequence, start=1):
        event = event_for(step, model, float(clock), timers)
        if event is None:
            continue
        try:
            new, out = handle(model, event)
        except (T.InvalidTopologyException, T.NotAliveException, T.AlreadyAliveException):
            continue
        except T.IllegalStateException:
            assert step[0] in ("activate", "deactivate", "kill", "rebalance", "resize")
            continue
        timers += [i for i in out if isinstance(i, ins.StartTimer)]
        check_invariants(new, out, step)
        zookeeper = check_zookeeper(zookeeper, new, out)
        model = new


def identities(assignment):
    """Each worker's identity as its supervisor compares it (a change restarts it)."""
    return {
        key: spec.identity
        for sid in HOSTS
        for key, spec in desired_workers(sid, {"t": assignment}, [6700, 6701]).items()
    }


def check_zookeeper(zookeeper, model, out):
    """Apply the writes to what ZooKeeper would hold ({tid: (tasks, assignment)}) and check
    it against the model and the last state."""
    held = dict(zookeeper)
    for i in out:
        match i:
            case ins.CreateTopology() | ins.WriteTasks():
                held[i.topology_id] = (dict(i.tasks), i.assignment)
            case ins.WriteAssignment():
                held[i.topology_id] = (held[i.topology_id][0], i.assignment)
            case ins.RemoveTopology():
                held.pop(i.topology_id, None)
    for tid, (tasks, assignment) in held.items():
        assert set(assignment.task_slots) <= set(tasks), "an assignment of unknown tasks"
        if tid in model.topologies:
            assert model.topologies[tid].tasks == tasks, "the model's tasks are not /tasks"
        before = zookeeper.get(tid)
        if before and before[0] != tasks:
            old = identities(before[1])
            assert not set(identities(assignment).items()) & set(old.items()), "kept a worker"
    return held
