"""Bad topologies against a live cluster (issue #11, items 4 and 6), as an attacker would send
them: a plain thriftpy2 client built from squall.thrift, which skips every client-side check,
and the `squall` command, which should refuse them before uploading anything.

Each refusal must be an InvalidTopologyException naming the problem, leave nimbus alive, and
leave nothing behind: no upload in nimbus's inbox, no /storms node, the name free again."""

import json
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest
import thriftpy2
from thriftpy2.protocol import TBinaryProtocolFactory
from thriftpy2.rpc import make_client
from thriftpy2.transport import TFramedTransportFactory

import squall
from squall.code_package import pack_directory
from squall.local import LocalCluster, wait_for
from squall.security.tls import client_context
from squall.submit import submit_file
from squall.topology import load_topology_file

TINY = Path(__file__).parents[1] / "integration" / "topologies" / "tiny.py"
THRIFT = Path(squall.__file__).parent / "squall.thrift"
API = thriftpy2.load(str(THRIFT), module_name="foreign_squall_thrift")


@pytest.fixture(scope="module")
def cluster(tmp_path_factory):
    with LocalCluster(tmp_path_factory.mktemp("cluster"), supervisors=1) as c:
        yield c


@pytest.fixture(scope="module")
def victim(cluster):
    """A running topology the attacks aim at: its id, as nimbus gave it."""
    with cluster.client() as client:
        submit_file(client, TINY, cluster.client_conf(), name="victim")
        summaries = client.getClusterInfo().topologies
    return next(s.id for s in summaries if s.name == "victim")


@pytest.fixture
def foreign(cluster):
    client = make_client(
        API.Nimbus,
        "127.0.0.1",
        cluster.nimbus_port,
        proto_factory=TBinaryProtocolFactory(),
        trans_factory=TFramedTransportFactory(),
        timeout=60_000,
        ssl_context=client_context(cluster.client_conf()),  # an admin: only the checks stop it
    )
    yield client
    client.close()


def inbox(cluster) -> list[Path]:
    directory = cluster.directory / "nimbus" / "nimbus" / "inbox"  # storm.local.dir/nimbus/inbox
    assert directory.is_dir(), f"no inbox at {directory}"
    return sorted(directory.glob("upload-*"))


def storms(cluster) -> list[str]:
    zk = cluster.zk_client("nimbus")
    try:
        return sorted(zk.get_children("/squall/storms"))
    finally:
        zk.stop()
        zk.close()


def assert_nothing_left(cluster, victim) -> None:
    assert cluster.processes["nimbus"].poll() is None, "nimbus exited"
    assert inbox(cluster) == []
    assert storms(cluster) == [victim]
    with cluster.client() as client:
        names = [s.name for s in client.getClusterInfo().topologies]
    assert names == ["victim"]


def foreign_submit(client, name: str, topology, conf: str = "{}") -> str:
    location = client.beginFileUpload()
    # a package nimbus would accept (tiny's own), so the refusal is the topology's
    client.uploadChunk(location, pack_directory(TINY.parent, 10_000_000))
    client.finishFileUpload(location)
    with pytest.raises(API.InvalidTopologyException) as info:
        client.submitTopology(name, location, conf, topology)
    return info.value.msg


def tiny(**parallelism: int):
    topology = load_topology_file(TINY).to_thrift()
    for component, par in parallelism.items():
        spec = topology.spouts.get(component) or topology.bolts[component]
        spec.common.parallelism_hint = par
    return topology


def as_foreign(topology):
    """The same StormTopology as the foreign module's struct (same Thrift bytes)."""
    from thriftpy2.protocol import TBinaryProtocolFactory
    from thriftpy2.utils import deserialize, serialize

    return deserialize(API.StormTopology(), serialize(topology, TBinaryProtocolFactory()))


@pytest.mark.parametrize(
    ("conf", "problem"),
    [
        ('{"topology.batch.size": 0}', "topology conf: topology.batch.size must be at least 1"),
        ('{"topology.max.spout.pending": -1}', "topology.max.spout.pending must be at least 0"),
        (  # a cluster setting is left out of a topology conf, but its type is still checked
            '{"storm.zookeeper.root": 5}',
            "topology conf: storm.zookeeper.root must be a string, got integer 5",
        ),
        (  # a Storm key squall ignores is type-checked as Storm does
            '{"topology.kryo.register": 5}',
            "topology conf: topology.kryo.register must be a list of class names",
        ),
        ('{"when": NaN, "x": ', "topology conf is not valid JSON"),
        # nested past Python's recursion limit (an untyped internal error, the upload kept)
        ('{"a": ' + "[" * 100_000 + "]" * 100_000 + "}", "topology conf is not valid JSON"),
        (  # Storm's ackers: each one a task (with spouts tracking, none runs)
            '{"topology.acker.executors": 1000000, "topology.spouts.track.trees": false}',
            "would have 1000004 tasks (executors and ackers); nimbus.max.tasks allows 1000",
        ),
    ],
)
def test_bad_confs_over_thrift(cluster, victim, foreign, conf, problem):
    assert problem in foreign_submit(foreign, "bad", as_foreign(tiny()), conf)
    assert_nothing_left(cluster, victim)


def test_cluster_settings_are_left_out_of_a_topology_conf_over_thrift(cluster, victim, foreign):
    """What an attacker's topology conf would repoint its workers with is dropped, not
    refused (Storm accepts any key); the topology runs with the cluster's settings."""
    location = foreign.beginFileUpload()
    foreign.uploadChunk(location, pack_directory(TINY.parent, 10_000_000))
    foreign.finishFileUpload(location)
    conf = '{"storm.zookeeper.root": "/elsewhere", "nimbus.seeds": [], "topology.name": "x"}'
    foreign.submitTopology("repointed", location, conf, as_foreign(tiny()))
    try:
        with cluster.client() as client:
            tid = next(s.id for s in client.getClusterInfo().topologies if s.name == "repointed")
            stored = json.loads(client.getTopologyConf(tid))
        assert "storm.zookeeper.root" not in stored and "nimbus.seeds" not in stored
        assert stored["topology.name"] == "repointed"  # nimbus's, as Storm's
    finally:
        foreign.killTopologyWithOpts("repointed", API.KillOptions(wait_secs=0))
    wait_for(lambda: storms(cluster) == [victim], 60, "the repointed topology gone")

    def listed() -> list[str]:  # nimbus's model follows ZooKeeper's removal a moment later
        with cluster.client() as client:
            return [s.name for s in client.getClusterInfo().topologies]

    wait_for(lambda: listed() == ["victim"], 60, "nimbus to list only the victim")
    assert_nothing_left(cluster, victim)


def test_too_many_tasks_over_thrift(cluster, victim, foreign):
    msg = foreign_submit(foreign, "big", as_foreign(tiny(numbers=999, sink=10)))
    assert msg.endswith(
        "would have 1009 tasks (executors and ackers); nimbus.max.tasks allows 1000"
    )
    assert_nothing_left(cluster, victim)


def test_a_component_twice_over_thrift(cluster, victim, foreign):
    topology = tiny()
    topology.bolts["numbers"] = topology.bolts.pop("sink")
    msg = foreign_submit(foreign, "dup", as_foreign(topology))
    assert msg == "component 'numbers' is declared as both spout and bolt"
    assert_nothing_left(cluster, victim)


def test_a_name_equal_to_a_running_id_over_thrift(cluster, victim, foreign):
    msg = foreign_submit(foreign, victim, as_foreign(tiny()))
    assert msg == f"topology name {victim!r} is the id of a running topology; choose another"
    assert_nothing_left(cluster, victim)


def test_rebalance_and_config_set_beyond_the_limit_over_thrift(cluster, victim, foreign):
    with pytest.raises(API.InvalidTopologyException) as info:
        foreign.rebalance("victim", API.RebalanceOptions(num_executors={"sink": 1_000_000}))
    assert "would have 1000002 tasks" in info.value.msg  # 1000000 sinks, 2 spouts
    with pytest.raises(API.InvalidTopologyException, match="fixed at submit"):
        foreign.setTopologyConf("victim", "topology.spouts.track.trees", "false")  # executors
    with pytest.raises(API.InvalidTopologyException, match="batch.size must be at least 1"):
        foreign.setTopologyConf("victim", "topology.batch.size", "0")
    with pytest.raises(API.InvalidTopologyException, match="cluster setting"):
        foreign.setTopologyConf("victim", "storm.zookeeper.root", '"/x"')
    with pytest.raises(API.InvalidTopologyException, match="must be an integer"):
        foreign.setTopologyConf("victim", "topology.batch.size", "[" * 100_000 + "]" * 100_000)
    assert_nothing_left(cluster, victim)
    info = foreign.getTopologyInfo(victim)
    assert sorted(e.component_id for e in info.executors).count("sink") == 2


# --- the CLI: refused before the upload, one clear line, exit status 1 ---

HEADER = "from squall import Bolt, Grouping, Spout, Topology\n" + textwrap.dedent(
    """
    class Numbers(Spout):
        outputs = ["n"]

    class Sink(Bolt):
        pass
    """
)

BAD_FILES = {
    "dup": (
        """
        class Dup(Topology):
            numbers = Numbers.spec(name="same")
            sink = Sink.spec(name="same", inputs=["numbers"])
        """,
        "Dup: two components are named 'same'",
    ),
    "half": (
        """
        class Half(Topology):
            numbers = Numbers.spec(par=1.5)
        """,
        "component 'numbers': parallelism must be a whole number from 1 to 10000, got 1.5",
    ),
    "unsendable": (
        """
        class Unsendable(Topology):
            config = {"topology.workers": 1, "when": {1, 2}}
            numbers = Numbers.spec()
        """,
        "topology conf: when cannot be sent as JSON",
    ),
    "zero": (
        """
        class Zero(Topology):
            config = {"topology.batch.size": 0}
            numbers = Numbers.spec()
        """,
        "topology conf: topology.batch.size must be at least 1, got 0",
    ),
    "root": (
        """
        class Root(Topology):
            numbers = Numbers.spec(config={"storm.zookeeper.root": 5})
        """,
        "component 'numbers' conf: storm.zookeeper.root must be a string",
    ),
}


def cli(cluster, *args: str) -> subprocess.CompletedProcess:
    command = [sys.executable, "-m", "squall.cli", "--config", str(cluster.client_conf_file())]
    command += ["--nimbus", f"127.0.0.1:{cluster.nimbus_port}"]
    return subprocess.run([*command, *args], capture_output=True, text=True, timeout=120)


@pytest.mark.parametrize("case", sorted(BAD_FILES))
def test_cli_refuses_a_bad_topology_file(cluster, victim, tmp_path, case):
    body, problem = BAD_FILES[case]
    path = tmp_path / f"{case}.py"
    path.write_text(HEADER + textwrap.dedent(body))
    result = cli(cluster, "submit", str(path))
    output = " ".join((result.stdout + result.stderr).split())  # rich may wrap long lines
    assert result.returncode == 1, output
    assert "InvalidTopologyException" in output and problem in output
    assert "Traceback" not in output
    assert_nothing_left(cluster, victim)


def test_cli_refuses_a_name_taken_as_an_id_and_a_huge_rebalance(cluster, victim):
    result = cli(cluster, "submit", str(TINY), "--name", victim)
    output = " ".join((result.stdout + result.stderr).split())
    assert result.returncode == 1 and "is the id of a running topology" in output
    result = cli(cluster, "rebalance", "victim", "-e", "sink=1000000", "--no-wait")
    output = " ".join((result.stdout + result.stderr).split())
    assert result.returncode == 1 and "nimbus.max.tasks allows 1000" in output
    assert "Traceback" not in output
    assert_nothing_left(cluster, victim)
    wait_for(lambda: cluster.processes["nimbus"].poll() is None, 5, "nimbus alive")


def test_the_largest_allowed_topology_is_written_to_zookeeper_in_one_request(cluster):
    """nimbus.max.tasks tasks with 100-character names: the create transaction and a full
    /tasks rewrite both go through the real server, and the session survives them, with the
    role ACLs nimbus's client puts on every node."""
    from squall.nimbus.cluster_state import ClusterState
    from squall.nimbus.core.write_size import BUDGET, topology_write_bytes
    from squall.records import Assignment
    from squall.security.topology_keys import new_keys
    from squall.zk import connection as zk_mod
    from squall.zk.acl_client import RoleAclClient
    from squall.zk.layout import ZkLayout

    from ..unit.test_nimbus_limits import largest

    tid, base, tasks, node_ids = largest(max_tasks=1000)
    assert topology_write_bytes("/sizecheck", tid, base, tasks, node_ids, tasks) <= BUDGET
    placement = {t: (node_ids[t % len(node_ids)], 65535) for t in tasks}
    hosts = {n: "h" * 36 for n in node_ids}
    assignment = Assignment(1, tid, hosts, placement, {t: 1_700_000_000 for t in tasks})
    zk = zk_mod.connect({**cluster.client_conf(), "storm.zookeeper.root": "/sizecheck"}, "nimbus")
    try:
        assert isinstance(zk, RoleAclClient)
        state = ClusterState(zk, ZkLayout("/sizecheck"))
        state.ensure_layout()
        state.take_lead()
        session = zk.client_id
        state.create_topology(tid, base, dict(tasks), assignment, new_keys())
        state.write_tasks(tid, dict(tasks), assignment)
        assert len(zk.get_children(f"/sizecheck/tasks/{tid}")) == 1000
        assert zk.connected and zk.client_id == session
        zk.delete("/sizecheck", recursive=True)
    finally:
        zk.stop()
        zk.close()
