"""Storm's CLI verbs (`squall version`, `set_log_level`, `get-errors`, `upload-credentials`,
`monitor`, `heartbeats`, `blobstore`, `list`) run in-process through click against a real
secure cluster, each checked by what nimbus or ZooKeeper then holds."""

import getpass
import json

import pytest
from click.testing import CliRunner

from squall import thrift_api as T
from squall.cli import main
from squall.local import LocalCluster, wait_for
from squall.security import user_credentials as uc
from squall.zk.layout import ZkLayout

from .conftest import TOPOLOGIES

NAME = "clitiny"


@pytest.fixture(scope="module")
def cluster(tmp_path_factory):
    with LocalCluster(tmp_path_factory.mktemp("cli"), supervisors=1) as c:
        yield c


def squall(cluster, *args, input=None, env=None):
    base = ["--config", str(cluster.client_conf_file())]
    base += ["--nimbus", f"127.0.0.1:{cluster.nimbus_port}"]
    return CliRunner().invoke(main, [*base, *args], input=input, env=env)


def ok(result):
    assert result.exit_code == 0, (result.output, result.exception)
    return result


@pytest.fixture(scope="module")
def topology(cluster):
    """clitiny submitted through the CLI and running: every task heartbeating."""
    ok(squall(cluster, "submit", str(TOPOLOGIES / "tiny.py"), "--name", NAME))
    with cluster.client() as client:

        def running():
            info = client.getTopologyInfoByName(NAME)
            stats = [e.stats for e in info.executors]
            emitted = [s.emitted.get(":all-time", {}) for s in stats if s]
            return info.id if all(stats) and any(emitted) else None

        yield wait_for(running, 120, f"{NAME} running")


def test_list_shows_storms_columns_the_owner_and_whole_ids(cluster, topology):
    admin = cluster.client_conf()["security.user"]
    listed = ok(squall(cluster, "list", env={"COLUMNS": "20"}))
    lines = listed.output.splitlines()
    assert lines[0].split()[:3] == ["Topology_name", "Status", "Num_tasks"]
    row = next(line.split() for line in lines if line.startswith(NAME + " "))
    assert row == [NAME, "ACTIVE", "4", "2", row[4], topology, admin]  # the id whole at 20
    assert "supervisor1" in listed.output
    document = json.loads(ok(squall(cluster, "list", "--json")).output)
    mine = next(t for t in document["topologies"] if t["name"] == NAME)
    assert (mine["id"], mine["owner"], mine["num_workers"]) == (topology, admin, 2)
    with cluster.client() as client:
        assert client.getTopologyInfo(topology).owner == admin


def test_set_log_level_sets_and_removes_levels(cluster, topology):
    ok(squall(cluster, "set_log_level", "-l", "ROOT=DEBUG:30", "-l", "tiny=WARN", NAME))
    with cluster.client() as client:
        levels = client.getLogConfig(topology).named_logger_level
        assert (levels["ROOT"].target_log_level, levels["ROOT"].reset_log_level_timeout_secs) == (
            "DEBUG",
            30,
        )
        assert levels["tiny"].target_log_level == "WARN"
        ok(squall(cluster, "set-log-level", "-r", "tiny", NAME))
        assert set(client.getLogConfig(topology).named_logger_level) == {"ROOT"}
    missing = squall(cluster, "set_log_level", "-l", "ROOT=INFO", "nope")
    assert missing.exit_code == 1 and "nope is not a running topology" in missing.output


def test_get_errors_prints_each_components_latest_error(cluster, topology, zk):
    empty = json.loads(ok(squall(cluster, "get-errors", NAME)).output)
    assert empty == {"Topology Name": NAME, "Comp-Errors": {}}
    layout = ZkLayout(cluster.base_conf_full()["storm.zookeeper.root"])
    node = f"{layout.errors(topology)}/sink"
    reports = [
        {"error": "older", "time_secs": 1},
        {"error": "ValueError: [bold]no[/bold]", "time_secs": 2},
    ]
    zk.ensure_path(layout.errors(topology))
    zk.create(node, json.dumps(reports).encode())
    try:
        shown = json.loads(ok(squall(cluster, "get_errors", NAME)).output)
        assert shown == {
            "Topology Name": NAME,
            "Comp-Errors": {"sink": "ValueError: [bold]no[/bold]"},
        }
    finally:
        zk.delete(node)
    missing = squall(cluster, "get-errors", "nope")
    assert missing.exit_code == 1
    assert json.loads(missing.output) == {"Failure": "No topologies running with name nope"}


def test_upload_credentials_from_a_properties_file_and_pairs(cluster, topology, zk, tmp_path):
    creds = tmp_path / "creds.properties"
    creds.write_text("# for the sink\ntoken = abc\nshared=from-file\n")
    ok(squall(cluster, "upload-credentials", NAME, "-f", str(creds), "shared", "from-args"))
    layout = ZkLayout(cluster.base_conf_full()["storm.zookeeper.root"])
    data, _ = zk.get(layout.usercredentials(topology))
    assert uc.decode(data, "creds") == {"token": "abc", "shared": "from-args"}
    empty = squall(cluster, "upload_credentials", NAME, "-e")
    assert empty.exit_code == 1 and f"No credentials were uploaded for {NAME}" in empty.output
    other = squall(cluster, "upload-credentials", NAME, "-u", "mallory", "k", "v")
    assert other.exit_code == 1 and "AuthorizationException" in other.output


def test_monitor_prints_throughput_lines(cluster, topology):
    listed = ok(squall(cluster, "monitor", NAME))
    assert "numbers" in listed.output.splitlines() and "Please use -m" in listed.output
    watched = ok(squall(cluster, "monitor", NAME, "-m", "numbers", "-i", "1", "--count", "2"))
    header, *rows = watched.output.splitlines()
    assert header.split("\t") == [
        "topology",
        "component",
        "parallelism",
        "stream",
        "time-diff ms",
        "emitted",
        "throughput (Kt/s)",
    ]
    assert len(rows) == 2
    first = rows[0].split("\t")
    assert first[:4] == [NAME, "numbers", "2", "default"] and int(first[5]) > 0
    assert int(rows[1].split("\t")[4]) > 0  # the second line is an interval later
    unknown = squall(cluster, "monitor", NAME, "-m", "nope", "--count", "1")
    assert unknown.exit_code == 1 and "component: nope not found" in unknown.output
    bad_stream = squall(cluster, "monitor", NAME, "-m", "numbers", "-s", "x", "--count", "1")
    assert bad_stream.exit_code == 1 and "stream: x not found" in bad_stream.output


def test_heartbeats_list_and_get(cluster, topology):
    roots = ok(squall(cluster, "heartbeats", "list", "/workerbeats")).output.splitlines()
    assert roots[0] == "list /workerbeats:" and topology in roots[1:]
    slots = ok(squall(cluster, "heartbeats", "list", f"/workerbeats/{topology}"))
    slot = slots.output.splitlines()[1]
    beat = json.loads(
        ok(squall(cluster, "heartbeats", "get", f"/workerbeats/{topology}/{slot}")).output
    )
    assert beat["storm-id"] == topology and beat["uptime"] >= 0 and beat["executor-stats"]
    nothing = ok(squall(cluster, "heartbeats", "get", f"/workerbeats/{topology}/none-1"))
    assert nothing.output.strip() == "No Heartbeats found"


def test_blobstore_round_trip(cluster, tmp_path):
    data = bytes(range(256)) * 3000  # 768000 bytes: three upload chunks
    source = tmp_path / "data.bin"
    source.write_bytes(data)
    created = squall(cluster, "blobstore", "create", "cli-data", "-f", str(source), "-a", "o::r")
    assert "Successfully created cli-data" in ok(created).output
    listed = ok(squall(cluster, "blobstore", "list")).output.splitlines()
    line = next(x for x in listed if x.startswith("cli-data "))
    admin = cluster.client_conf()["security.user"]
    assert line.endswith(f"[o::r--, u:{admin}:rwa]") or line.endswith(f"[u:{admin}:rwa, o::r--]")
    out = tmp_path / "out.bin"
    ok(squall(cluster, "blobstore", "cat", "cli-data", "-f", str(out)))
    assert out.read_bytes() == data
    ok(squall(cluster, "blobstore", "update", "cli-data", input=b"new bytes"))
    assert ok(squall(cluster, "blobstore", "cat", "cli-data")).stdout_bytes == b"new bytes"
    ok(squall(cluster, "blobstore", "set-acl", "cli-data", "--set", f"u:{admin}:rwa"))
    with cluster.client() as client:
        acl = client.getBlobMeta("cli-data").settable.acl
        assert [(a.type, a.name) for a in acl] == [(T.AccessControlType.USER, admin)]
    read = ok(squall(cluster, "blobstore", "replication", "--read", "cli-data"))
    assert read.output.startswith("Current replication factor ")
    updated = squall(cluster, "blobstore", "replication", "--update", "-r", "2", "cli-data")
    assert ok(updated).output.startswith("Replication factor is set to ")
    unknown = ok(squall(cluster, "blobstore", "list", "cli-data", "nope"))
    assert "nope NOT FOUND" in unknown.output
    ok(squall(cluster, "blobstore", "delete", "cli-data"))
    gone = squall(cluster, "blobstore", "cat", "cli-data")
    assert gone.exit_code == 1 and "KeyNotFoundException" in gone.output
    again = squall(cluster, "blobstore", "create", "cli-data-2", input=b"x")
    ok(again)
    dup = squall(cluster, "blobstore", "create", "cli-data-2", input=b"y")
    assert dup.exit_code == 1 and "KeyAlreadyExistsException" in dup.output
    ok(squall(cluster, "blobstore", "delete", "cli-data-2"))


def test_rebalance_with_storms_conf_and_resource_overrides(cluster, topology):
    """`rebalance -t JSON -r JSON` (Storm 2's RebalanceOptions overrides, over real Thrift):
    the conf key merged into the topology's conf, the sink's tasks declaring what -r says
    (the topology resource-aware from then on), and the topology running again; a bad -t
    is refused before anything is sent."""
    overrides = ("-t", '{"tiny.extra": 7}', "-r", '{"sink": {"onheap.memory.mb": 256}}')
    ok(squall(cluster, "rebalance", "-w", "0", *overrides, "--timeout", "120", NAME))
    with cluster.client() as client:
        assert json.loads(client.getTopologyConf(topology))["tiny.extra"] == 7
        sink = client.getComponentPageInfo(topology, "sink", ":all-time", False)
        assert sink.resources_map["onheap.memory.mb"] == 256.0
        ackers = len(client.getTopologyInfo(topology).executors) - 4  # 2 numbers, 2 sinks
        page = client.getTopologyPageInfo(topology, ":all-time", False)
        assert page.requested_memonheap == 2 * 256.0 + (2 + ackers) * 128.0  # the rest: Storm's
    bad = squall(cluster, "rebalance", "-t", "[1]", NAME)
    assert bad.exit_code == 2 and "must be a JSON object" in bad.output


def test_in_open_mode_the_owner_is_the_os_user_nimbus_runs_as(tmp_path):
    """As Storm: no principal, so nimbus records System.getProperty("user.name")."""
    with LocalCluster(tmp_path, supervisors=0, conf={"security": False}) as open_cluster:
        tiny = str(TOPOLOGIES / "tiny.py")
        ok(squall(open_cluster, "submit", tiny, "--name", "open", "--inactive"))
        document = json.loads(ok(squall(open_cluster, "list", "--json")).output)
        owners = [(t["name"], t["owner"]) for t in document["topologies"]]
        assert owners == [("open", getpass.getuser())]
