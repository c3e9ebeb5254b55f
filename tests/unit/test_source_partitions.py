"""The runtime of partitioned sources over the in-memory coordination: nobody reads before
owning, an owner stops at once when its session is suspended and reloads the committed
offset after losing it, offsets commit on schedule behind acks, fenced writes stop reading,
and cleanup gives the partitions back."""

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from squall.recipes import ownership as o
from squall.recipes.in_memory import InMemoryCoordination, InMemoryRegistry
from squall.recipes.ownership import Ownership
from squall.source_partitions import Changes, Replay, SourcePartitions


def task(registry, names=("p0",), commit_secs=1.0):
    session = InMemoryCoordination(registry)
    return session, SourcePartitions(session, "g", "s", list(names), commit_secs)


def stored(registry, name="p0"):
    return registry.offsets.get(("g", "s", name), (0, None))[0]


def test_reads_only_what_it_owns_and_waits_for_the_previous_owner():
    registry = InMemoryRegistry()
    first_session, first = task(registry)
    _, second = task(registry)
    assert first.readable() == [] and second.readable() == []  # nothing before a claim
    assert first.poll(0) == Changes({"p0": 0})
    assert second.poll(0) == Changes()
    assert second.state("p0") is Ownership.WAITING and second.readable() == []
    first.emitted("p0", 10, "lines", cut=False)
    first.acked("p0", 0)
    first.close()  # commits, then deletes its owner node: the second's watch fires
    assert first_session._owners == []  # it no longer listens to its session
    assert stored(registry) == 10
    assert first.state("p0") is Ownership.RELEASED and first.readable() == []
    assert second.poll(1) == Changes({"p0": 10})
    assert second.readable() == ["p0"] and second.next_offset("p0") == 10


def test_a_suspended_owner_stops_at_once_and_resumes_where_it_was():
    registry = InMemoryRegistry()
    session, parts = task(registry)
    parts.poll(0)
    parts.emitted("p0", 10, "a", cut=False)
    parts.failed("p0", 0)
    session.suspend()
    assert not parts.may_read("p0")  # without waiting for a poll
    assert parts.next_replay() is None  # a replay is reading too
    assert parts.poll(1) == Changes()
    session.reconnect()
    assert parts.poll(2) == Changes()  # same session: nothing to reopen
    assert parts.may_read("p0") and parts.next_offset("p0") == 10
    assert parts.next_replay() == Replay("p0", 0, "a")


def test_after_the_session_expired_another_task_reads_and_the_owner_reloads():
    registry = InMemoryRegistry()
    session, first = task(registry)
    _, second = task(registry)
    first.poll(0)
    second.poll(0)
    first.emitted("p0", 10, "a", cut=False)
    first.emitted("p0", 20, "b", cut=False)
    first.acked("p0", 0)
    first.poll(5)  # commits 10
    first.failed("p0", 10)
    session.suspend()
    session.expire()  # its node goes; the second's watch fires
    assert second.poll(6) == Changes({"p0": 10})
    assert not first.may_read("p0")
    session.reconnect()  # hears SessionLost: drops what it read, waits for the second
    assert first.poll(7) == Changes(closed=("p0",))
    assert first.state("p0") is Ownership.WAITING and first.next_replay() is None
    with pytest.raises(RuntimeError, match="not being read"):
        first.next_offset("p0")  # what it read is forgotten
    first.acked("p0", 10)  # a late verdict for a batch of the lost ownership
    second.emitted("p0", 30, "c", cut=False)
    second.acked("p0", 10)
    second.close()
    assert stored(registry) == 30
    assert first.poll(8) == Changes({"p0": 30})
    assert first.next_replay() is None  # the failed batch of the lost ownership is not replayed


def test_offsets_commit_on_schedule_and_only_when_moved():
    registry = InMemoryRegistry()
    _, parts = task(registry, commit_secs=5)
    parts.poll(100)
    parts.emitted("p0", 4, "a", cut=False)
    parts.acked("p0", 0)
    parts.poll(104.9)
    assert stored(registry) == 0
    parts.poll(105)
    assert stored(registry) == 4 and registry.offsets[("g", "s", "p0")][1] == 0
    parts.poll(111)
    assert registry.offsets[("g", "s", "p0")][1] == 0  # unchanged: not written again
    assert parts.parts["p0"].records == {}  # the acked batch's lines are not kept


def test_a_loaded_position_is_not_written_back_unchanged():
    registry = InMemoryRegistry()
    registry.offsets[("g", "s", "p0")] = (40, 3)
    registry.cuts[("g", "s", "p0")] = ((45,), 2)
    _, parts = task(registry, commit_secs=0)
    assert parts.poll(0) == Changes({"p0": 40})
    assert parts.batch_end("p0", 10) == 45
    parts.emitted("p0", 45, "a", cut=True)
    parts.poll(1)
    assert registry.offsets[("g", "s", "p0")] == (40, 3)
    assert registry.cuts[("g", "s", "p0")] == ((45,), 2)


def test_a_suspended_owner_commits_nothing():
    registry = InMemoryRegistry()
    session, parts = task(registry, commit_secs=0)
    parts.poll(0)
    parts.emitted("p0", 10, "a", cut=False)
    parts.parts["p0"].owner.handle(o.Suspended())  # the store itself could still write
    parts.acked("p0", 0)
    parts.poll(1)
    assert ("g", "s", "p0") not in registry.offsets
    session.suspend()
    parts.close()
    session.reconnect()
    parts.poll(2)  # released: nothing more
    assert ("g", "s", "p0") not in registry.offsets


class ScriptedOwner:
    """An owner whose poll returns given reading instructions: for the runtime's handling of
    an order of instructions a real session rarely produces in one poll."""

    def __init__(self, script):
        self.script = script

    def poll(self):
        todo, self.script = self.script, []
        return todo

    def may_read(self):
        return True


class ScriptedCoordination:
    def __init__(self, script):
        self.script = script
        self.memory = InMemoryCoordination()

    def owner(self, group, source, partition):
        return ScriptedOwner(self.script)

    def offsets(self, group, source, partition):
        return self.memory.offsets(group, source, partition)


def test_a_partition_started_and_dropped_in_one_poll_is_only_closed():
    script = [o.StartReading(), o.DropPosition()]
    parts = SourcePartitions(ScriptedCoordination(script), "g", "s", ["p0"], 1)
    assert parts.poll(0) == Changes(closed=("p0",))
    assert parts.readable() == []


def test_an_unknown_reading_instruction_raises():
    parts = SourcePartitions(ScriptedCoordination([o.TryClaim()]), "g", "s", ["p0"], 1)
    with pytest.raises(TypeError, match="unknown reading instruction"):
        parts.poll(0)


def test_a_cut_is_stored_before_the_batch_goes_out_and_pruned_once_committed():
    registry = InMemoryRegistry()
    _, parts = task(registry, commit_secs=0)
    parts.poll(0)
    assert parts.batch_end("p0", 10) == 10
    assert parts.emitted("p0", 5, "a", cut=True) == 0
    assert registry.cuts[("g", "s", "p0")][0] == (5,)
    assert parts.emitted("p0", 15, "b", cut=False) == 5
    parts.acked("p0", 0)
    parts.poll(1)
    assert stored(registry) == 5 and registry.cuts[("g", "s", "p0")][0] == ()


def test_a_fenced_owner_stops_reading_and_reloads():
    registry = InMemoryRegistry()
    _, parts = task(registry, commit_secs=0)
    parts.poll(0)
    parts.emitted("p0", 10, "a", cut=False)
    parts.acked("p0", 0)
    registry.offsets[("g", "s", "p0")] = (50, 7)  # someone else wrote meanwhile
    parts.poll(1)
    assert not parts.may_read("p0")
    assert parts.poll(2) == Changes({"p0": 50}, ("p0",))  # ours again (our node): reloaded
    assert parts.emitted("p0", 60, "x", cut=True) == 50
    registry.cuts[("g", "s", "p0")] = ((55,), 9)
    assert parts.emitted("p0", 65, "y", cut=True) is None  # fenced storing a cut: not emitted


def test_unknown_partitions_and_verdicts_are_ignored():
    _, parts = task(InMemoryRegistry())
    parts.acked("other", 0)
    parts.failed("other", 0)
    parts.failed("p0", 0)  # not being read yet
    assert parts.replays == []


TASKS = 2


@settings(max_examples=1000, deadline=None)
@given(
    st.lists(
        st.tuples(
            st.sampled_from(["suspend", "reconnect", "expire", "poll", "read"]),
            st.integers(0, TASKS - 1),
        ),
        max_size=40,
    )
)
def test_never_two_readers_of_a_partition(ops):
    """Whatever happens to the sessions, at every moment at most one task may read p0, and a
    task that reads again after losing its session starts from the stored offset."""
    registry = InMemoryRegistry()
    tasks = [task(registry) for _ in range(TASKS)]
    for op, i in ops:
        session, parts = tasks[i]
        if op == "suspend" and session.connected:
            session.suspend()
        elif op == "reconnect" and not session.connected:
            session.reconnect()
        elif op == "expire" and not session.connected:  # the server expires silent sessions
            session.expire()
        elif op == "poll":
            opened = parts.poll(0).opened
            if "p0" in opened:
                assert opened["p0"] == stored(registry)
        elif op == "read" and parts.may_read("p0"):
            first = parts.emitted("p0", parts.next_offset("p0") + 1, "x", cut=False)
            parts.acked("p0", first)
            parts.commit()
        assert sum(p.may_read("p0") for _, p in tasks) <= 1


def test_an_owner_raises_on_an_unknown_instruction_and_event():
    owner = InMemoryCoordination().owner("g", "s", "p0")
    owner._queue("claim")
    with pytest.raises(TypeError, match="unknown ownership instruction"):
        owner.poll()
    with pytest.raises(TypeError, match="unknown ownership event"):
        owner.handle("suspended")


def test_a_failed_batch_is_replayed_once_per_failure():
    registry = InMemoryRegistry()
    _, parts = task(registry)
    parts.poll(0)
    parts.emitted("p0", 5, "lines 0-4", cut=False)
    parts.failed("p0", 0)
    assert parts.next_replay() == Replay("p0", 0, "lines 0-4")
    assert parts.next_replay() is None  # handed out once: the spout emits it again
    parts.failed("p0", 0)  # the replay failed too
    assert parts.next_replay() == Replay("p0", 0, "lines 0-4")


def test_only_the_part_of_a_position_that_moved_is_written():
    registry = InMemoryRegistry()
    _, parts = task(registry, commit_secs=0)
    parts.poll(0)
    parts.emitted("p0", 3, "a", cut=True)  # a cut is stored before the batch goes out...
    assert registry.cuts[("g", "s", "p0")][0] == (3,)
    assert ("g", "s", "p0") not in registry.offsets  # ...and the unmoved offset is not
    parts.emitted("p0", 8, "b", cut=False)
    parts.acked("p0", 3)  # acked beyond a gap: nothing to commit yet
    cuts_version = registry.cuts[("g", "s", "p0")][1]
    parts.poll(1)
    assert ("g", "s", "p0") not in registry.offsets
    assert registry.cuts[("g", "s", "p0")][1] == cuts_version  # unchanged cuts not rewritten


def test_a_commit_without_cuts_writes_no_cuts():
    registry = InMemoryRegistry()
    _, parts = task(registry, commit_secs=0)
    parts.poll(0)
    parts.emitted("p0", 5, "a", cut=False)
    parts.acked("p0", 0)
    parts.poll(1)
    assert stored(registry) == 5
    assert ("g", "s", "p0") not in registry.cuts
