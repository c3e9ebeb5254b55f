"""A cluster on a three-server ZooKeeper ensemble (squall.zk.ensemble). With one server
killed mid-run (the ensemble's leader, so a new one is elected) nothing is lost and no
process restarts; with two killed there is no quorum: nimbus, supervisors and workers wait
without exiting or restarting, and carry on with nothing lost once the quorum is back."""

import time

import pytest

from squall.local import LocalCluster, topology_progress, wait_for

from .gated_run import kill, numbers, submit_gated, wait_for_numbers, workers

STEP = 200  # numbers let through at each phase of a run
# The quorum is gone this long: several heartbeat periods of workers (1 s), supervisors
# (1 s) and nimbus (2 s). Sessions (15 s) then have time to reconnect once it is back, also
# on a loaded machine (a newly elected ZooKeeper leader restarts every session's timeout).
OUTAGE_SECS = 6
SESSION_TIMEOUT_MS = 15000


@pytest.fixture(scope="module")
def cluster(tmp_path_factory):
    with LocalCluster(
        tmp_path_factory.mktemp("ensemble"),
        supervisors=2,
        slots_per_supervisor=1,  # one worker on each supervisor
        zookeeper_servers=3,
        conf={"storm.zookeeper.session.timeout": SESSION_TIMEOUT_MS},
    ) as c:
        yield c


@pytest.fixture(scope="module")
def run(cluster, tmp_path_factory):
    with pytest.MonkeyPatch.context() as monkeypatch:
        gated = submit_gated(cluster, tmp_path_factory.mktemp("gated"), monkeypatch)
    yield gated
    kill(cluster, gated)


def processes(cluster):
    """Every daemon's pid and every worker's pid and start time: equal before and after
    means nothing was restarted."""
    daemons = {name: p.pid for name, p in cluster.processes.items() if p.poll() is None}
    return daemons, workers(cluster)


def ensemble_leader(ensemble) -> int:
    from squall.zk.server import four_letters

    def leader():
        for myid in ensemble.processes:
            if b"Mode: leader" in four_letters(ensemble.address(myid), ensemble.port, b"srvr"):
                return myid
        return None

    return wait_for(leader, 30, "the ensemble to have a leader")


def heartbeats_advance(cluster, tid):
    """Wait until every worker has written a newer heartbeat to ZooKeeper than now."""
    conf = cluster.client_conf()
    before = wait_for(lambda: topology_progress(conf, tid), 30, "worker heartbeats")["seqs"]

    def newer():
        seqs = topology_progress(conf, tid)["seqs"]
        return len(seqs) == len(before) and all(a > b for a, b in zip(seqs, before, strict=True))

    wait_for(newer, 30, "every worker to heartbeat again")


def let_through_more(run, timeout=60):
    done = len(numbers(run.out))
    run.open_to(done + STEP)
    assert wait_for_numbers(run.out, done + STEP, timeout) == list(range(done + STEP))


def test_one_server_killed_mid_run_loses_and_restarts_nothing(cluster, run):
    ensemble = cluster.zookeeper
    let_through_more(run)
    before = processes(cluster)
    leader = ensemble_leader(ensemble)
    ensemble.stop_server(leader)
    try:
        let_through_more(run)
        heartbeats_advance(cluster, run.tid)  # ZooKeeper is written to on the two left
        with cluster.client() as client:
            assert len(client.getClusterInfo().supervisors) == 2
        assert processes(cluster) == before
    finally:
        ensemble.start_server(leader)
        ensemble.wait_serving(ensemble.myids, 60)


def test_without_a_quorum_everything_waits_and_resumes_with_nothing_lost(cluster, run):
    ensemble = cluster.zookeeper
    let_through_more(run)
    before = processes(cluster)
    leader = ensemble_leader(ensemble)
    [follower, last] = [i for i in ensemble.myids if i != leader]
    ensemble.stop_server(leader)
    ensemble.stop_server(follower)
    try:
        wait_for(lambda: not ensemble.is_serving(last), 30, f"server {last} to lose its quorum")
        done = len(numbers(run.out))
        run.open_to(done + STEP)  # tuples travel worker to worker, not through ZooKeeper
        deadline = time.monotonic() + OUTAGE_SECS
        while time.monotonic() < deadline:  # the whole outage: nobody exits or restarts
            assert processes(cluster) == before
            assert not ensemble.is_serving(last)
            time.sleep(0.5)
    finally:
        ensemble.start_server(leader)
        ensemble.start_server(follower)
    ensemble.wait_serving(ensemble.myids, 60)
    assert wait_for_numbers(run.out, done + STEP, 60) == list(range(done + STEP))
    heartbeats_advance(cluster, run.tid)
    with cluster.client() as client:
        assert len(client.getClusterInfo().supervisors) == 2
    let_through_more(run)
    assert processes(cluster) == before
