"""ZooKeeper stopped under a running cluster: nimbus still answers its reads, at once, from
what it last read, marked stale and naming ZooKeeper as the cause, over Thrift, in `squall
list` and in the UI's REST API; a standby says what it last read too, and names the leader it
saw; ZooKeeper back, the mark goes away (issue 35)."""

import subprocess
import sys

import httpx
import pytest

from squall import thrift_api as T
from squall.client import nimbus_client
from squall.local import LocalCluster, wait_for
from squall.submit import submit_file

from .conftest import TOPOLOGIES

pytestmark = pytest.mark.integration
CLIENT_TIMEOUT_SECS = 5  # a read that blocked on ZooKeeper would fail here, not hang
NAME = "outage"


@pytest.fixture(scope="module")
def cluster(tmp_path_factory):
    directory = tmp_path_factory.mktemp("zk-outage")
    with LocalCluster(directory, supervisors=1, nimbuses=2, ui=True) as c:
        yield c


def nimbus(cluster, port=None):
    """A client of one nimbus (the leader) with a short timeout, no getLeader first."""
    port = port or cluster.leader()[1]
    conf = cluster.client_conf()
    return nimbus_client("127.0.0.1", port, CLIENT_TIMEOUT_SECS, conf=conf)


def squall_list(cluster) -> str:
    command = [sys.executable, "-m", "squall.cli", "--config", str(cluster.client_conf_file())]
    done = subprocess.run([*command, "list"], capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    return done.stdout


def ui(cluster, path: str) -> dict:
    url = cluster.ui_url + "/api/v1" + path
    return httpx.get(url, timeout=30, headers=cluster.ui_headers()).json()


def test_reads_answer_from_what_nimbus_last_knew_while_zookeeper_is_down(cluster):
    with cluster.client() as client:
        submit_file(client, TOPOLOGIES / "tiny.py", cluster.client_conf(), name=NAME)
    leader_port = cluster.leader()[1]
    [standby_port] = [p for p in cluster.nimbus_ports if p != leader_port]
    with nimbus(cluster, leader_port) as client:
        tid = {t.name: t.id for t in client.getClusterInfo().topologies}[NAME]
        before = client.getTopologyInfo(tid)  # its beats and errors read once
    assert before.stale_since is None
    with nimbus(cluster, standby_port) as standby:
        assert NAME in {t.name for t in standby.getClusterInfo().topologies}  # read once
    cluster.zookeeper.stop()
    try:

        def stale_cluster():
            with nimbus(cluster, leader_port) as client:
                info = client.getClusterInfo()
            return info if info.stale_since is not None else None

        info = wait_for(stale_cluster, 60, "nimbus to mark its answers stale")
        assert "ZooKeeper" in info.stale_cause
        assert NAME in {t.name for t in info.topologies}
        assert all(t.stale_since == info.stale_since for t in info.topologies)
        with nimbus(cluster, leader_port) as client:  # each answered within the client timeout
            topology = client.getTopologyInfo(tid)
            assert topology.name == NAME and "ZooKeeper" in topology.stale_cause
            assert len(topology.executors) == len(before.executors)
            leader = client.getLeader()
            assert (leader.port, leader.stale_since) == (leader_port, info.stale_since)
            page = client.getTopologyPageInfo(tid, ":all-time", False)
            assert page.name == NAME and page.stale_since == info.stale_since
            assert client.getTopologySummaryByName(NAME).stale_since == info.stale_since

        def standby_stale():
            with nimbus(cluster, standby_port) as standby:
                return standby.getClusterInfo().stale_since is not None

        wait_for(standby_stale, 60, "the standby to mark its answers stale")
        with nimbus(cluster, standby_port) as standby:
            seen = standby.getClusterInfo()
            assert NAME in {t.name for t in seen.topologies} and "ZooKeeper" in seen.stale_cause
            assert standby.getLeader().port == leader_port  # the leader it saw last

        listed = squall_list(cluster)  # through the seeds' getLeader, as a user would
        first = listed.splitlines()[0]
        assert first.startswith("ZooKeeper unreachable since "), listed
        assert first.endswith("figures as of then") and tid in listed

        summary = ui(cluster, "/cluster/summary")
        assert summary["stale"] and "ZooKeeper unreachable" in summary["staleNote"], summary
        [row] = [t for t in ui(cluster, "/topology/summary")["topologies"] if t["id"] == tid]
        assert row["stale"] and row["name"] == NAME
        assert ui(cluster, f"/topology/{tid}")["stale"]
    finally:
        cluster.zookeeper.start()

    def fresh():
        for i in (1, 2):  # a leader whose session expired steps down (exit 3): start it again
            if cluster.processes[cluster.nimbus_name(i)].poll() is not None:
                cluster.restart_nimbus(i)
        infos = []
        for port in cluster.nimbus_ports:
            with nimbus(cluster, port) as client:
                infos.append(client.getClusterInfo())
        return all(i.stale_since is None and NAME in {t.name for t in i.topologies} for i in infos)

    wait_for(fresh, 120, "nimbus to answer fresh figures again")
    assert not squall_list(cluster).startswith("ZooKeeper")
    wait_for(lambda: ui(cluster, "/cluster/summary")["stale"] is False, 60, "the UI fresh again")
    with cluster.client() as client:
        client.killTopologyWithOpts(NAME, T.KillOptions(wait_secs=0))
