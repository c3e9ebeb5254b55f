"""Several hosts on one machine: two supervisors on 127.0.0.2 and 127.0.0.3 (each its own
storm.local.hostname), nimbus on 127.0.0.4, ZooKeeper on 127.0.0.5. Tuples cross between
workers on different addresses and arrive exactly; every process listens on its own host's
address only, so nothing leans on 127.0.0.1."""

import pytest

from squall.local import LocalCluster

from .gated_run import (
    assignment,
    kill,
    listening,
    numbers,
    sink_rows,
    submit_gated,
    wait_for_numbers,
)

SUPERVISOR_HOSTS = ["127.0.0.2", "127.0.0.3"]
NIMBUS_HOST = "127.0.0.4"
ZOOKEEPER_HOST = "127.0.0.5"
COUNT = 400


@pytest.fixture(scope="module")
def cluster(tmp_path_factory):
    with LocalCluster(
        tmp_path_factory.mktemp("hosts"),
        supervisors=2,
        slots_per_supervisor=1,  # the topology's two workers must go to both hosts
        supervisor_hosts=SUPERVISOR_HOSTS,
        nimbus_host=NIMBUS_HOST,
        zookeeper_host=ZOOKEEPER_HOST,
    ) as c:
        yield c


def test_supervisors_register_their_own_hosts_and_nimbus_names_its_address(cluster):
    with cluster.client() as client:
        info = client.getClusterInfo()
        assert sorted(s.host for s in info.supervisors) == SUPERVISOR_HOSTS
        assert [(n.host, n.port) for n in info.nimbuses] == [(NIMBUS_HOST, cluster.nimbus_port)]
    assert cluster.leader() == (NIMBUS_HOST, cluster.nimbus_port)


def test_tuples_cross_hosts_exactly_and_each_worker_binds_its_host_only(
    cluster, tmp_path, monkeypatch
):
    run = submit_gated(cluster, tmp_path, monkeypatch)
    run.open_to(COUNT)
    assert wait_for_numbers(run.out, COUNT, 60) == list(range(COUNT))

    placed = assignment(cluster, run.tid)
    host_of = {task: placed.node_host[node] for task, (node, _) in placed.task_slots.items()}
    with cluster.client() as client:
        executors = client.getTopologyInfo(run.tid).executors
    spout_hosts = {e.host for e in executors if e.component_id == "numbers"}
    sink_tasks = {e.executor_info.task_start: e.host for e in executors if e.component_id == "sink"}
    assert spout_hosts == set(SUPERVISOR_HOSTS)  # a spout on each host...
    assert set(sink_tasks.values()) == set(SUPERVISOR_HOSTS)  # ...and sinks on each
    assert all(host_of[task] == host for task, host in sink_tasks.items())
    written = {host_of[task] for task, ns in sink_rows(run.out).items() if ns}
    assert written == set(SUPERVISOR_HOSTS)  # numbers were fields-grouped across hosts

    for node, port in set(placed.task_slots.values()):
        pid_file = cluster.directory / node / "supervisor" / "workers" / f"{run.tid}-{port}.pid"
        address = placed.node_host[node]
        assert listening(int(pid_file.read_text())) == {(address, port)}, node
    for name in ("supervisor1", "supervisor2"):  # a supervisor serves nothing itself
        assert listening(cluster.processes[name].pid) == set(), name
    assert listening(cluster.processes["nimbus"].pid) == {(NIMBUS_HOST, cluster.nimbus_port)}
    zk_sockets = listening(cluster.zookeeper.process.pid)
    assert {address for address, _ in zk_sockets} == {ZOOKEEPER_HOST}
    kill(cluster, run)
    assert numbers(run.out) == list(range(COUNT))
