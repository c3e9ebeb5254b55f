"""Storm 2's read calls for its UI and CLI (issue #17) over real Thrift and TLS against a
local cluster: each answers with a running topology's real figures, unknown names are
NotAliveException, and the calls are authorized as Storm authorizes them."""

import json

import pytest

from squall import thrift_api as T
from squall.client import nimbus_client
from squall.local import LocalCluster, topology_id, wait_for
from squall.security.certificates import issue
from squall.submit import submit_file

from .conftest import TOPOLOGIES

TINY = TOPOLOGIES / "tiny.py"
EMITTED = 200  # tiny: two spout tasks emit 100 numbers each, then stop
USERS = ["alice", "bob"]


@pytest.fixture(scope="module")
def cluster(tmp_path_factory):
    conf = {"nimbus.users": USERS}
    with LocalCluster(tmp_path_factory.mktemp("ui"), supervisors=1, conf=conf) as c:
        for name in [*USERS, "mallory"]:
            issue(c.base_conf_full(), name)
        yield c


@pytest.fixture(scope="module")
def tiny(cluster):
    """alice's tiny topology, run until its sink has executed every number."""
    with cluster.client("alice") as client:
        submit_file(client, TINY, cluster.client_conf(), name="tiny")
        tid = topology_id(client, "tiny")

        def done():
            page = client.getTopologyPageInfo(tid, ":all-time", False)
            sink = page.id_to_bolt_agg_stats.get("sink")
            return sink is not None and sink.specific_stats.bolt.executed == EMITTED

        wait_for(done, 120, "tiny's sink to execute every number")
    return tid


def test_summaries_by_id_and_name(cluster, tiny):
    with cluster.client("bob") as client:  # a user command: any nimbus user
        [summary] = client.getTopologySummaries()
        assert (summary.id, summary.name, summary.status) == (tiny, "tiny", "ACTIVE")
        assert summary.num_workers == 2
        by_name = client.getTopologySummaryByName("tiny")
        summary.uptime_secs = by_name.uptime_secs = 0  # it may tick between the two calls
        assert by_name == summary
        assert client.getTopologySummary(tiny).num_executors == summary.num_executors
        with pytest.raises(T.NotAliveException, match="nope"):
            client.getTopologySummaryByName("nope")
        with pytest.raises(T.NotAliveException, match="nope"):
            client.getTopologySummary("nope")
        with pytest.raises(T.NotAliveException):
            client.getTopologySummary("tiny")  # a name is not an id


def test_topology_info_by_name_and_with_options(cluster, tiny):
    with cluster.client("alice") as client:
        info = client.getTopologyInfoByName("tiny")
        assert info.id == tiny
        assert {e.component_id for e in info.executors} >= {"numbers", "sink"}
        for executor in info.executors:  # the same stats as getTopologyInfo: spouts' are spouts'
            if executor.stats is not None:
                spout = executor.stats.specific.spout is not None
                assert spout == (executor.component_id == "numbers"), executor
        options = T.GetInfoOptions(num_err_choice=T.NumErrorsChoice.NONE)
        assert client.getTopologyInfoByNameWithOpts("tiny", options).id == tiny
        quiet = client.getTopologyInfoWithOpts(tiny, options)
        assert all(errors == [] for errors in quiet.errors.values())
        assert len(client.getTopologyInfoWithOpts(tiny, None).executors) == len(info.executors)
        with pytest.raises(T.NotAliveException, match="nope"):
            client.getTopologyInfoByName("nope")
        with pytest.raises(T.NotAliveException, match="nope"):
            client.getTopologyInfoWithOpts("nope", options)


def test_topology_page_has_the_running_topologys_figures(cluster, tiny):
    with cluster.client("alice") as client:
        page = client.getTopologyPageInfo(tiny, ":all-time", False)
        info = client.getTopologyInfo(tiny)
    assert (page.id, page.name, page.status, page.owner) == (tiny, "tiny", "ACTIVE", "alice")
    assert page.num_executors == len(info.executors) and page.num_workers == 2
    assert json.loads(page.topology_conf)["topology.workers"] == 2
    numbers = page.id_to_spout_agg_stats["numbers"]
    assert numbers.type == T.ComponentType.SPOUT
    assert numbers.common_stats.emitted == EMITTED and numbers.common_stats.num_executors == 2
    assert page.id_to_bolt_agg_stats["sink"].specific_stats.bolt.executed == EMITTED
    assert not any(c.startswith("__") for c in page.id_to_bolt_agg_stats)
    assert page.topology_stats.window_to_emitted[":all-time"] >= EMITTED
    assert sorted(w.port for w in page.workers) == sorted({e.port for e in info.executors})
    placed = {}
    for w in page.workers:
        for component, n in w.component_to_num_tasks.items():
            placed[component] = placed.get(component, 0) + n
    assert placed == {"numbers": 2, "sink": 2}
    with cluster.client("alice") as client:
        with_sys = client.getTopologyPageInfo(tiny, ":all-time", True)
        with pytest.raises(T.NotAliveException, match="nope"):
            client.getTopologyPageInfo("nope", ":all-time", False)
    system = {e.component_id for e in info.executors if e.component_id.startswith("__")}
    assert set(with_sys.id_to_bolt_agg_stats) == {"sink"} | system


def test_component_page_lists_its_executors(cluster, tiny):
    with cluster.client("alice") as client:
        page = client.getComponentPageInfo(tiny, "sink", ":all-time", False)
        info = client.getTopologyInfo(tiny)
        with pytest.raises(T.NotAliveException, match="nope"):
            client.getComponentPageInfo(tiny, "nope", ":all-time", False)
        with pytest.raises(T.NotAliveException, match="nope"):
            client.getComponentPageInfo("nope", "sink", ":all-time", False)
    assert (page.component_id, page.component_type) == ("sink", T.ComponentType.BOLT)
    assert (page.topology_id, page.topology_name, page.num_executors) == (tiny, "tiny", 2)
    sinks = {
        (e.executor_info.task_start, e.host, e.port)
        for e in info.executors
        if e.component_id == "sink"
    }
    listed = {
        (s.exec_summary.executor_info.task_start, s.exec_summary.host, s.exec_summary.port)
        for s in page.exec_stats
    }
    assert listed == sinks
    executed = [s.stats.specific_stats.bolt.executed for s in page.exec_stats]
    assert sum(executed) == EMITTED
    assert page.window_to_stats[":all-time"].specific_stats.bolt.executed == EMITTED
    # Storm's windows, measured by the workers: tiny ran for less than 10 minutes
    assert set(page.window_to_stats) == {"600", "10800", "86400", ":all-time"}
    ten = page.window_to_stats["600"].specific_stats.bolt
    assert ten.executed == EMITTED and ten.execute_latency_ms > 0 and 0 <= ten.capacity <= 1
    key = T.GlobalStreamId("numbers", "default")  # the sink's one input stream
    for e in info.executors:
        if e.component_id == "sink":
            bolt = e.stats.specific.bolt
            assert set(bolt.executed) == set(page.window_to_stats)
            assert set(bolt.execute_ms_avg["600"]) == {key}
    executed = sum(
        e.stats.specific.bolt.executed[":all-time"][key]
        for e in info.executors
        if e.component_id == "sink"
    )
    assert executed == EMITTED


def test_supervisor_page_shows_its_workers(cluster, tiny):
    with cluster.client("alice") as client:
        [supervisor] = client.getClusterInfo().supervisors
        page = client.getSupervisorPageInfo(supervisor.supervisor_id, None, False)
        by_host = client.getSupervisorPageInfo(None, supervisor.host, False)
        with pytest.raises(T.NotAliveException, match="nope"):
            client.getSupervisorPageInfo("nope", None, False)
    assert [s.supervisor_id for s in page.supervisor_summaries] == [supervisor.supervisor_id]
    assert page.supervisor_summaries[0].num_used_workers == 2
    assert {w.topology_id for w in page.worker_summaries} == {tiny}
    assert len(page.worker_summaries) == 2
    assert all(w.component_to_num_tasks for w in page.worker_summaries)
    assert _timeless(by_host.worker_summaries) == _timeless(page.worker_summaries)
    with cluster.client("bob") as client:  # may see the supervisor, not alice's components
        hidden = client.getSupervisorPageInfo(supervisor.supervisor_id, None, False)
    assert len(hidden.worker_summaries) == 2
    assert all(w.component_to_num_tasks is None for w in hidden.worker_summaries)


def _timeless(workers: list[T.WorkerSummary]) -> list[dict]:
    """Worker summaries without their clock readings (two calls may straddle a second)."""
    return [{**vars(w), "time_secs": None, "uptime_secs": None} for w in workers]


def test_history_lists_what_the_caller_may_read_also_after_removal(cluster, tiny):
    conf = cluster.client_conf()
    with cluster.client("alice") as client:
        submit_file(client, TINY, conf, name="gone", inactive=True)
        gone = topology_id(client, "gone")
        client.killTopologyWithOpts("gone", T.KillOptions(wait_secs=0))
        wait_for(lambda: client.isTopologyNameAllowed("gone"), 60, "gone to be removed")
        assert {tiny, gone} <= set(client.getTopologyHistory("alice").topo_ids)
    with cluster.client("bob") as client:
        assert client.getTopologyHistory("bob").topo_ids == []
        assert client.getTopologyHistory("alice").topo_ids == []  # not a way round the ACL
    with cluster.client() as client:  # admin
        assert {tiny, gone} <= set(client.getTopologyHistory("").topo_ids)


def test_owner_resource_summaries_count_each_owners_topologies(cluster, tiny):
    with cluster.client("bob") as client:
        every = {s.owner: s for s in client.getOwnerResourceSummaries(None)}
        [bobs] = client.getOwnerResourceSummaries("bob")
        executors = client.getTopologySummary(tiny).num_executors
    alice = every["alice"]
    assert (alice.total_topologies, alice.total_workers) == (1, 2)
    assert alice.total_executors == executors
    assert (bobs.owner, bobs.total_topologies) == ("bob", 0)


def test_authorization_applies(cluster, tiny):
    with cluster.client("bob") as client:  # a nimbus user, not a reader of alice's topology
        for operation, call in {
            "getTopologyPageInfo": lambda: client.getTopologyPageInfo(tiny, ":all-time", False),
            "getComponentPageInfo": lambda: client.getComponentPageInfo(
                tiny, "sink", ":all-time", False
            ),
            "getTopologyInfo": lambda: client.getTopologyInfoByName("tiny"),
        }.items():
            with pytest.raises(T.AuthorizationException, match=f"bob.*{operation}"):
                call()
    conf = cluster.client_conf()
    # not in nimbus.users (so not even getLeader: straight to the only nimbus)
    with nimbus_client("127.0.0.1", cluster.nimbus_port, conf=conf, identity="mallory") as client:
        for operation, call in {
            "getTopologySummaries": client.getTopologySummaries,
            "getTopologySummaryByName": lambda: client.getTopologySummaryByName("tiny"),
            "getSupervisorPageInfo": lambda: client.getSupervisorPageInfo(None, "x", False),
            "getOwnerResourceSummaries": lambda: client.getOwnerResourceSummaries(None),
            "getTopologyHistory": lambda: client.getTopologyHistory("mallory"),
        }.items():
            with pytest.raises(T.AuthorizationException, match=f"mallory.*{operation}"):
                call()
    with cluster.client("alice") as client:
        client.setTopologyConf("tiny", "topology.readonly.users", '["bob"]')
    with cluster.client("bob") as client:  # now a reader
        assert client.getComponentPageInfo(tiny, "sink", ":all-time", False).num_executors == 2
        assert tiny in client.getTopologyHistory("bob").topo_ids
