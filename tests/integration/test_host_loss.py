"""A lost host stops only its own tasks (issue 38 item 2): two supervisors as two hosts on
loopback addresses of their own; one is killed with its workers, as when a machine dies.
Nimbus puts the lost worker's tasks on a free slot (a new worker), not on the surviving
worker, whose task set stays as it was: that worker keeps its process and re-routes live to
the moved tasks' new address, and the output goes on through it.

The topology has an odd number of tasks (gated.py's six and one __acker), so its two workers
hold 4 and 3; the host holding 4 is the one lost. Spreading the 4 lost tasks evenly over two
slots would put one of them on the survivor, which is what nimbus did before: it restarted
the surviving worker too."""

import os
import signal

import pytest

from squall.local import LocalCluster, wait_for

from .gated_run import (
    alive,
    assignment,
    kill,
    numbers,
    running,
    start_time,
    submit_gated,
)

SUPERVISOR_HOSTS = ["127.0.0.6", "127.0.0.7"]
FIRST, THEN = 200, 600  # numbers let through before the loss, and in all after it


@pytest.fixture(scope="module")
def cluster(tmp_path_factory):
    conf = {
        "storm.zookeeper.session.timeout": 6000,  # a dead supervisor's node goes in 6 s
        "supervisor.monitor.frequency.secs": 1,
    }
    with LocalCluster(
        tmp_path_factory.mktemp("host-loss"),
        supervisors=2,
        slots_per_supervisor=2,  # a free slot on each host
        supervisor_hosts=SUPERVISOR_HOSTS,
        conf=conf,
    ) as c:
        yield c


def _pid_file(cluster, tid, slot):
    node, port = slot
    return cluster.directory / node / "supervisor" / "workers" / f"{tid}-{port}.pid"


def test_a_lost_host_moves_its_tasks_to_a_new_worker_and_the_survivor_runs_on(
    cluster, tmp_path, monkeypatch
):
    acking = {"topology.spouts.track.trees": False, "topology.acker.executors": 1}
    run = submit_gated(cluster, tmp_path, monkeypatch, acking)
    try:
        before = assignment(cluster, run.tid)
        tasks_on = {}
        for task, slot in before.task_slots.items():
            tasks_on.setdefault(slot, set()).add(task)
        assert sorted(map(len, tasks_on.values())) == [3, 4]  # one worker per host
        lost = max(tasks_on, key=lambda slot: len(tasks_on[slot]))
        [kept] = set(tasks_on) - {lost}
        assert lost[0] != kept[0]
        kept_pid = int(_pid_file(cluster, run.tid, kept).read_text())
        kept_started = start_time(kept_pid)
        run.open_to(FIRST)
        assert set(wait_for_count(run, FIRST)) >= set(range(FIRST))

        lost_pid = int(_pid_file(cluster, run.tid, lost).read_text())
        supervisor = cluster.processes.pop(lost[0])
        supervisor.kill()  # the machine dies: its supervisor...
        os.kill(lost_pid, signal.SIGKILL)  # ...and its worker
        supervisor.wait()
        wait_for(lambda: not alive(lost_pid), 30, "the lost host's worker to end")

        def moved():
            now = assignment(cluster, run.tid)
            return all(node != lost[0] for node, _ in now.task_slots.values()) and now

        after = wait_for(moved, 90, "the lost host's tasks to move")
        with cluster.client() as client:
            wait_for(lambda: running(client, run.tid), 90, "every executor running again")
        assert {t for t, s in after.task_slots.items() if s == kept} == tasks_on[kept]
        new_slots = set(after.task_slots.values()) - {kept}
        assert len(new_slots) == 1 and next(iter(new_slots))[0] == kept[0]  # a new worker

        run.open_to(THEN)
        # every number, those the surviving worker's spout emits to sink tasks now on the
        # new worker too: it sends them to their new address
        assert set(wait_for_count(run, THEN)) >= set(range(THEN))
        assert int(_pid_file(cluster, run.tid, kept).read_text()) == kept_pid
        assert alive(kept_pid) and start_time(kept_pid) == kept_started
    finally:
        kill(cluster, run)


def wait_for_count(run, limit: int) -> list[int]:
    """The sink's numbers once every number below `limit` is among them (a restarted
    spout task emits its share again from the start: copies are allowed here)."""
    wait_for(lambda: set(range(limit)) <= set(numbers(run.out)), 90, f"numbers below {limit}")
    return numbers(run.out)
