"""A node that fails its health checks (Storm's storm.health.check.dir scripts) loses its
supervisor and workers, and nimbus moves their tasks to a healthy host: two supervisors as
two hosts on loopback addresses of their own, one whose disk check starts saying ERROR."""

import stat

import pytest

from squall.local import LocalCluster, wait_for
from squall.processes import SUPERVISOR_UNHEALTHY

from .gated_run import alive, assignment, kill, running, submit_gated, wait_for_numbers

HOSTS = ["127.0.0.8", "127.0.0.9"]
CHECK = """#!/bin/sh
if [ -e "$(dirname "$0")/full" ]; then echo "ERROR disk /data is full"; exit 1; fi
exit 0
"""


@pytest.fixture(scope="module")
def checks(tmp_path_factory):
    """Each supervisor's health-check directory, with the same disk check."""
    out = {}
    for i in (1, 2):
        directory = tmp_path_factory.mktemp(f"checks{i}")
        disk = directory / "disk"
        disk.write_text(CHECK)
        disk.chmod(disk.stat().st_mode | stat.S_IXUSR)
        out[i] = directory
    return out


@pytest.fixture(scope="module")
def cluster(tmp_path_factory, checks):
    health = {
        i: {"storm.health.check.dir": str(d), "supervisor.health.check.interval.secs": 1}
        for i, d in checks.items()
    }
    with LocalCluster(
        tmp_path_factory.mktemp("node-health"),
        supervisors=2,
        slots_per_supervisor=2,
        supervisor_hosts=HOSTS,
        supervisor_confs=health,
        conf={"supervisor.monitor.frequency.secs": 1},
    ) as c:
        yield c


def _worker_pids(cluster, node: str) -> list[int]:
    pids = cluster.directory / node / "supervisor" / "workers"
    return [int(p.read_text()) for p in pids.glob("*.pid")]


def test_a_failing_health_check_stops_the_supervisor_and_its_tasks_move(
    cluster, checks, tmp_path, monkeypatch
):
    run = submit_gated(cluster, tmp_path, monkeypatch)
    try:
        nodes = {node for node, _ in assignment(cluster, run.tid).task_slots.values()}
        assert nodes == {"supervisor1", "supervisor2"}  # a worker on each host
        run.open_to(100)
        wait_for_numbers(run.out, 100, 60)
        doomed = _worker_pids(cluster, "supervisor1")
        assert doomed and all(map(alive, doomed))

        (checks[1] / "full").write_text("")  # the disk check now says ERROR
        supervisor = cluster.processes["supervisor1"]
        wait_for(lambda: supervisor.poll() is not None, 30, "the unhealthy supervisor to stop")
        assert supervisor.returncode == SUPERVISOR_UNHEALTHY
        log = (cluster.directory / "supervisor1.log").read_text()
        assert "the node failed its health checks" in log
        assert "ERROR disk /data is full" in log
        wait_for(lambda: not any(map(alive, doomed)), 30, "its workers to end")

        def moved():
            now = assignment(cluster, run.tid)
            return all(node == "supervisor2" for node, _ in now.task_slots.values())

        wait_for(moved, 90, "its tasks to move to the healthy host")
        with cluster.client() as client:
            wait_for(lambda: running(client, run.tid), 90, "every executor running again")
        run.open_to(300)
        assert set(wait_for_numbers(run.out, 300, 90)) >= set(range(300))
    finally:
        kill(cluster, run)
