"""A lost host stops only its own tasks (issue 38 item 2): where free slots can take a lost
worker's tasks, every surviving worker keeps exactly the tasks it had, so its supervisor
does not restart it (nimbus/scheduling/scheduler.py, rule 2's order of the ceil loads)."""

from collections import Counter

from hypothesis import given, settings
from hypothesis import strategies as st

from squall.nimbus.scheduling.scheduler import assign_scratch, schedule


def by_slot(placement):
    out = {}
    for task, slot in placement.items():
        out.setdefault(slot, set()).add(task)
    return out


def lose(placement, host):
    """The placement's tasks on the other hosts: those alive after `host` died."""
    return {t for t, (node, _) in placement.items() if node != host}


def test_a_lost_worker_s_tasks_go_to_a_free_slot_not_to_the_survivor():
    """Five tasks on two workers (3 on h0, 2 on h1); h0 dies. The survivor at the floor keeps
    its two; the three lost tasks make a new worker on h1's free port. Before, one ceil load
    went to the survivor (h1:1 came first), which changed its tasks and restarted it."""
    slots = [(h, p) for h in ("h0", "h1") for p in (1, 2)]
    before = assign_scratch(range(5), slots, 2)
    assert by_slot(before) == {("h0", 1): {0, 2, 4}, ("h1", 1): {1, 3}}
    alive = [s for s in slots if s[0] == "h1"]
    after = schedule(range(5), alive, 2, before, lose(before, "h0"))
    assert by_slot(after) == {("h1", 1): {1, 3}, ("h1", 2): {0, 2, 4}}


def test_without_a_free_slot_the_lost_tasks_go_to_the_survivors():
    """No port left but the survivor's: the topology shrinks onto it (it restarts)."""
    slots = [("h0", 1), ("h1", 1)]
    before = assign_scratch(range(5), slots, 2)
    after = schedule(range(5), [("h1", 1)], 2, before, lose(before, "h0"))
    assert by_slot(after) == {("h1", 1): set(range(5))}


def test_a_ceil_load_goes_to_a_slot_that_takes_tasks_anyway_before_one_at_the_floor():
    """Eight tasks on three workers: loads 3, 3, 2. a:1 keeps its two (at the floor); the
    ceil loads go to b:1 (one live task: it changes anyway) and to the new c:1, not to a:1."""
    slots = [("a", 1), ("b", 1), ("c", 1)]
    existing = {1: ("a", 1), 2: ("a", 1), 3: ("b", 1)}
    after = schedule(range(1, 9), slots, 3, existing, {1, 2, 3})
    loads = {slot: len(tasks) for slot, tasks in by_slot(after).items()}
    assert loads == {("a", 1): 2, ("b", 1): 3, ("c", 1): 3}
    assert by_slot(after)[("a", 1)] == {1, 2}


def test_a_slot_over_the_floor_keeps_its_ceil_load_first():
    """Rule 2's first claim stands: a slot holding more than the floor keeps one more."""
    slots = [("a", 1), ("b", 1), ("c", 1)]
    existing = {1: ("a", 1), 2: ("a", 1), 3: ("a", 1), 4: ("b", 1)}
    after = schedule(range(1, 8), slots, 3, existing, {1, 2, 3, 4})
    assert by_slot(after)[("a", 1)] == {1, 2, 3}
    assert Counter(after.values())[("b", 1)] == 2  # 7 = 3 + 2 + 2: b:1 at the floor


# --- as a property: hosts of one size, a placement from scratch, one host lost ----------


@settings(max_examples=300, deadline=None)
@given(st.integers(2, 5), st.integers(1, 4), st.data())
def test_a_lost_host_changes_no_surviving_worker_while_free_slots_take_its_tasks(
    hosts, ports, data
):
    slots = [(f"h{h}", p) for h in range(hosts) for p in range(ports)]
    workers = data.draw(st.integers(1, len(slots)))
    n = data.draw(st.integers(workers, 3 * workers + 3))
    before = assign_scratch(range(n), slots, workers)
    used = set(before.values())
    lost = data.draw(st.sampled_from(sorted({node for node, _ in used})))
    rest = [s for s in slots if s[0] != lost]
    after = schedule(range(n), rest, workers, before, lose(before, lost))
    then = by_slot(after)
    lost_slots = {s for s in used if s[0] == lost}
    if len(set(rest) - used) >= len(lost_slots):  # room for every lost worker
        for slot, tasks in by_slot(before).items():
            if slot[0] != lost:
                assert then[slot] == tasks, slot
    # a later round with every task alive changes nothing: the survivors are not moved then
    assert schedule(range(n), rest, workers, after, set(after)) == after
