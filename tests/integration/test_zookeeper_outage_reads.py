"""ZooKeeper stopped under a running cluster: nimbus still answers its reads, at once, from
what it last read, marked stale and naming ZooKeeper as the cause, over Thrift, in `squall
list` and in the UI's REST API; ZooKeeper back, the mark goes away (issue 35)."""

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
    with LocalCluster(tmp_path_factory.mktemp("zk-outage"), supervisors=1, ui=True) as c:
        yield c


def nimbus(cluster):
    """A client of the one nimbus with a short timeout (no getLeader first)."""
    conf = cluster.client_conf()
    return nimbus_client("127.0.0.1", cluster.nimbus_port, CLIENT_TIMEOUT_SECS, conf=conf)


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
    with nimbus(cluster) as client:
        tid = {t.name: t.id for t in client.getClusterInfo().topologies}[NAME]
        before = client.getTopologyInfo(tid)  # its beats and errors read once
    assert before.stale_since is None
    cluster.zookeeper.stop()
    try:

        def stale_cluster():
            with nimbus(cluster) as client:
                info = client.getClusterInfo()
            return info if info.stale_since is not None else None

        info = wait_for(stale_cluster, 60, "nimbus to mark its answers stale")
        assert "ZooKeeper" in info.stale_cause
        assert NAME in {t.name for t in info.topologies}
        assert all(t.stale_since == info.stale_since for t in info.topologies)
        with nimbus(cluster) as client:  # each call answered within the client's timeout
            topology = client.getTopologyInfo(tid)
            assert topology.name == NAME and "ZooKeeper" in topology.stale_cause
            assert len(topology.executors) == len(before.executors)
            leader = client.getLeader()
            assert (leader.port, leader.stale_since) == (cluster.nimbus_port, info.stale_since)
            page = client.getTopologyPageInfo(tid, ":all-time", False)
            assert page.name == NAME and page.stale_since == info.stale_since
            assert client.getTopologySummaryByName(NAME).stale_since == info.stale_since

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
        if cluster.processes["nimbus"].poll() is not None:  # its session expired: exit 3
            cluster.restart_nimbus()
        with nimbus(cluster) as client:
            info = client.getClusterInfo()
        return info.stale_since is None and NAME in {t.name for t in info.topologies}

    wait_for(fresh, 120, "nimbus to answer fresh figures again")
    assert not squall_list(cluster).startswith("ZooKeeper")
    wait_for(lambda: ui(cluster, "/cluster/summary")["stale"] is False, 60, "the UI fresh again")
    with cluster.client() as client:
        client.killTopologyWithOpts(NAME, T.KillOptions(wait_secs=0))
