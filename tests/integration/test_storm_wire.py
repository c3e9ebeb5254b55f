"""Storm's clients get Storm's answers (#17): two IDLs squall did not write (Storm 1.x's as
streamparse 5.0.1 ships it, Storm 2.8.8's; tests/storm_idl/README.md) drive a live leader and
a standby over TLS. Every refusal reaches them as the exception Storm declares for the method
or a TApplicationException with a message, never as a normal return and never as a dropped
connection; every reply decodes with Storm's required fields present."""

from __future__ import annotations

import contextlib
import functools
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import thriftpy2
from kazoo.exceptions import NoAuthError
from packaging.version import Version
from thriftpy2.protocol import TBinaryProtocolFactory
from thriftpy2.rpc import make_client
from thriftpy2.thrift import TApplicationException
from thriftpy2.transport import TFramedTransportFactory

from squall import thrift_api as T
from squall.local import LocalCluster, wait_for
from squall.security import user_credentials as uc
from squall.security.certificates import issue
from squall.security.tls import client_context
from squall.submit import submit_file
from squall.zk.layout import ZkLayout

from .conftest import TOPOLOGIES

IDL_DIR = Path(__file__).resolve().parents[1] / "storm_idl"
IDLS = {
    name: thriftpy2.load(str(IDL_DIR / f"{name}.thrift"), module_name=f"{name}_wire_thrift")
    for name in ("storm1_streamparse", "storm2")
}
TINY = TOPOLOGIES / "tiny.py"
# squall's Python components are a ComponentObject member (id 100) Storm's IDL lacks: a Storm
# client reads such a union with no member set. Every other union must have exactly one.
FOREIGN_UNIONS = {"ComponentObject"}


@pytest.fixture(scope="module")
def cluster(tmp_path_factory):
    with LocalCluster(tmp_path_factory.mktemp("wire"), supervisors=1, nimbuses=2) as c:
        issue(c.base_conf_full(), "mallory")  # a user with no rights on the topologies
        with c.client() as client:
            submit_file(client, TINY, c.client_conf(), name="wire")
            submit_file(client, TINY, c.client_conf(), name="wire-idle", inactive=True)
            wait_for(lambda: running(client, "wire"), 120, "wire's executors to beat")
        yield c


def running(client: Any, name: str) -> bool:
    return all(e.stats is not None for e in client.getTopologyInfo(name).executors)


def ports(cluster: LocalCluster) -> dict[str, int]:
    _, leader = cluster.leader()
    return {"leader": leader, "standby": next(p for p in cluster.nimbus_ports if p != leader)}


@contextlib.contextmanager
def storm_client(
    cluster: LocalCluster, idl: str, role: str, identity: str | None = None
) -> Iterator[Any]:
    """A Storm client (its IDL, not squall's) of the leader or the standby, as `identity`
    (default admin)."""
    client = make_client(
        IDLS[idl].Nimbus,
        "127.0.0.1",
        ports(cluster)[role],
        proto_factory=TBinaryProtocolFactory(),
        trans_factory=TFramedTransportFactory(),
        timeout=30_000,
        ssl_context=client_context(cluster.client_conf(), identity),
    )
    try:
        yield client
    finally:
        client.close()


def missing_required(value: Any, where: str = "reply") -> list[str]:
    """Every required field left unset in `value`, recursively, as Storm's Java `validate()`
    would refuse it ("Required field 'x' was not present!"); thriftpy2 does not check."""
    if isinstance(value, list | set | frozenset):
        return [m for i, item in enumerate(value) for m in missing_required(item, f"{where}[{i}]")]
    if isinstance(value, dict):
        return [
            m
            for k, v in value.items()
            for m in missing_required(k, f"{where} key") + missing_required(v, f"{where}[{k!r}]")
        ]
    spec = getattr(value, "thrift_spec", None)
    if spec is None:
        return []
    problems = []
    name = type(value).__name__
    is_union = name in {"Grouping", "JavaObjectArg", "ExecutorSpecificStats", *FOREIGN_UNIONS}
    set_members = [s[1] for s in spec.values() if getattr(value, s[1]) is not None]
    if is_union and name not in FOREIGN_UNIONS and len(set_members) != 1:
        problems.append(f"{where} ({name}): union with {len(set_members)} members set")
    for field in spec.values():
        child = getattr(value, field[1])
        if child is None and field[-1] is True:
            problems.append(f"{where}.{field[1]} ({name}): required, not present")
        problems += missing_required(child, f"{where}.{field[1]}")
    return problems


def refused(client: Any, call: Any, declared: type | None, text: str) -> None:
    """`call` is refused as `declared` (None: a TApplicationException) with `text` in its
    message, and the same connection answers the next call."""
    expected = declared or TApplicationException
    with pytest.raises(expected) as info:
        call()
    message = info.value.msg if declared else info.value.message
    assert text in message, message
    assert client.getLeader().isLeader  # the connection still serves


@pytest.mark.parametrize("role", ["leader", "standby"])
@pytest.mark.parametrize("idl", sorted(IDLS))
def test_reads_decode_with_every_required_field(cluster, idl, role):
    with storm_client(cluster, idl, role) as client:
        info = client.getClusterInfo()
        assert sorted(n.isLeader for n in info.nimbuses) == [False, True]
        for nimbus in info.nimbuses:  # streamparse's nimbus_storm_version parses this
            assert Version(nimbus.version).major == 2 and "squall" in nimbus.version
        assert all(Version(s.version).major == 2 for s in info.supervisors)
        if idl == "storm2":  # Storm 2's field 13: what tasks hold of generic resources (none)
            assert all(s.used_generic_resources == {} for s in info.supervisors)
        tid = {t.name: t.id for t in info.topologies}["wire"]
        topology_info = client.getTopologyInfo(tid)
        stats = [e.stats for e in topology_info.executors]
        assert stats and all(s is not None for s in stats)
        kinds = {e.component_id: e.stats.specific for e in topology_info.executors}
        assert kinds["numbers"].spout is not None and kinds["sink"].bolt is not None
        topology = client.getTopology(tid)
        assert set(topology.spouts) == {"numbers"} and set(topology.bolts) >= {"sink"}
        replies = [
            info,
            topology_info,
            topology,
            client.getUserTopology(tid),
            client.getLeader(),
            client.getTopologyConf(tid),
            client.getNimbusConf(),
            client.isTopologyNameAllowed("wire"),
        ]
        assert missing_required(replies) == []


@pytest.mark.parametrize("role", ["leader", "standby"])
@pytest.mark.parametrize("idl", sorted(IDLS))
def test_an_unknown_topology_is_not_alive(cluster, idl, role):
    api = IDLS[idl]
    with storm_client(cluster, idl, role) as client:
        for call in (
            lambda: client.getTopologyInfo("nope"),
            lambda: client.getTopologyConf("nope"),
            lambda: client.getTopology("nope"),
            lambda: client.getUserTopology("nope"),
            lambda: client.killTopology("nope"),
            lambda: client.killTopologyWithOpts("nope", api.KillOptions(wait_secs=0)),
            lambda: client.activate("nope"),
            lambda: client.deactivate("nope"),
            lambda: client.rebalance("nope", api.RebalanceOptions()),
        ):
            refused(client, call, api.NotAliveException, "nope")


@pytest.mark.parametrize("idl", sorted(IDLS))
def test_a_standby_refuses_every_write_and_changes_nothing(cluster, idl):
    api = IDLS[idl]
    empty = api.StormTopology(spouts={}, bolts={}, state_spouts={})
    active = api.SubmitOptions(initial_status=api.TopologyInitialStatus.ACTIVE)
    leader = f"127.0.0.1:{ports(cluster)['leader']}"
    with storm_client(cluster, idl, "standby") as client:
        for call in (
            lambda: client.submitTopology("fresh", "loc", "{}", empty),
            lambda: client.submitTopologyWithOpts("fresh", "loc", "{}", empty, active),
            lambda: client.killTopology("wire"),
            lambda: client.killTopologyWithOpts("wire", api.KillOptions(wait_secs=0)),
            lambda: client.activate("wire-idle"),
            lambda: client.deactivate("wire"),
            lambda: client.rebalance("wire", api.RebalanceOptions(num_workers=1)),
            client.beginFileUpload,
        ):
            refused(client, call, None, leader)
        refused(client, lambda: client.uploadChunk("loc", b"x"), None, "loc")
        refused(client, lambda: client.finishFileUpload("loc"), None, "loc")
    with storm_client(cluster, idl, "leader") as client:
        statuses = {t.name: t.status for t in client.getClusterInfo().topologies}
        assert statuses == {"wire": "ACTIVE", "wire-idle": "INACTIVE"}


@pytest.mark.parametrize("idl", sorted(IDLS))
def test_uploads_and_submits_refuse_as_storm_declares(cluster, idl):
    api = IDLS[idl]
    with storm_client(cluster, idl, "leader") as client:
        refused(client, lambda: client.uploadChunk("no-such", b"x"), None, "no-such")
        refused(client, lambda: client.finishFileUpload("no-such"), None, "no-such")
        refused(client, lambda: client.downloadChunk("no-such"), None, "no-such")
        if hasattr(api.Nimbus, "beginFileDownload_args"):  # Storm 1.x only
            refused(client, lambda: client.beginFileDownload("../x"), None, "x")
        location = client.beginFileUpload()
        client.uploadChunk(location, b"not a code package")
        client.finishFileUpload(location)
        empty = api.StormTopology(spouts={}, bolts={}, state_spouts={})
        refused(
            client,
            lambda: client.submitTopology("wire", location, "{}", empty),
            (api.AlreadyAliveException, api.InvalidTopologyException),
            "",
        )
        assert not client.isTopologyNameAllowed("wire")


@pytest.mark.parametrize("idl", sorted(IDLS))
def test_illegal_transitions_and_arguments_are_errors_on_a_live_connection(cluster, idl):
    api = IDLS[idl]
    with storm_client(cluster, idl, "leader") as client:
        # kill with wait_secs -1: Storm declares no InvalidTopologyException on kill
        minus_one = api.KillOptions(wait_secs=-1)
        refused(client, lambda: client.killTopologyWithOpts("wire", minus_one), None, "wait_secs")
        client.rebalance("wire-idle", api.RebalanceOptions(wait_secs=600))
        try:
            refused(client, lambda: client.activate("wire-idle"), None, "IllegalStateException")
            statuses = {t.name: t.status for t in client.getClusterInfo().topologies}
            assert statuses == {"wire": "ACTIVE", "wire-idle": "REBALANCING"}
        finally:  # the next IDL's run starts from an inactive wire-idle again
            with cluster.client() as squall_client:
                squall_client.killTopologyWithOpts("wire-idle", T.KillOptions(wait_secs=0))
                wait_for(lambda: squall_client.isTopologyNameAllowed("wire-idle"), 60, "removal")
                submit_file(
                    squall_client, TINY, cluster.client_conf(), name="wire-idle", inactive=True
                )


def test_an_unknown_method_is_named_and_the_connection_kept(cluster, tmp_path):
    """A method no IDL here declares (Storm's nimbus has helpers its IDL does not list)."""
    idl = tmp_path / "extra.thrift"
    idl.write_text(
        "service Nimbus {\n  string getWorkerProfileActionExpiry()\n  string getNimbusConf()\n}\n"
    )
    extra = thriftpy2.load(str(idl), module_name="extra_thrift")
    client = make_client(
        extra.Nimbus,
        "127.0.0.1",
        ports(cluster)["leader"],
        trans_factory=TFramedTransportFactory(),
        timeout=30_000,
        ssl_context=client_context(cluster.client_conf()),
    )
    try:
        with pytest.raises(TApplicationException) as info:
            client.getWorkerProfileActionExpiry()
        assert info.value.type == TApplicationException.UNKNOWN_METHOD
        assert "getWorkerProfileActionExpiry" in info.value.message
        assert client.getNimbusConf()  # the connection still serves
    finally:
        client.close()


def test_required_field_checker_finds_what_storm_would_refuse():
    """The checker itself: ExecutorStats without `specific`, as squall sent it before."""
    api = IDLS["storm2"]
    bare = api.ExecutorStats(emitted={}, transferred={}, rate=0.0)
    assert missing_required(bare) == ["reply.specific (ExecutorStats): required, not present"]


def test_storm2_log_levels_and_debug_from_the_leader_and_the_standby(cluster):
    """Storm 2's setLogConfig, getLogConfig and debug from Storm's own IDL: the leader
    applies them, the standby reads the stored config and refuses the writes, naming the
    leader."""
    api = IDLS["storm2"]
    update = api.LogLevel(
        action=api.LogLevelAction.UPDATE, target_log_level="WARN", reset_log_level_timeout_secs=0
    )
    with storm_client(cluster, "storm2", "leader") as client:
        client.setLogConfig("wire", api.LogConfig(named_logger_level={"wire.x": update}))
        stored = client.getLogConfig("wire").named_logger_level
        assert stored["wire.x"].target_log_level == "WARN"
        client.debug("wire", "", True, 10.0)
        info = client.getTopologyInfoByName("wire")
        assert info.component_debug == {info.id: api.DebugOptions(enable=True, samplingpct=10.0)}
        client.debug("wire", "", False, 0.0)
        refused(client, lambda: client.debug("nope", "", True, 1.0), api.NotAliveException, "nope")
        refused(client, lambda: client.getLogConfig("nope"), None, "NotAliveException")
    leader = f"127.0.0.1:{ports(cluster)['leader']}"
    with storm_client(cluster, "storm2", "standby") as client:
        assert client.getLogConfig("wire").named_logger_level == stored
        refused(client, lambda: client.setLogConfig("wire", api.LogConfig()), None, leader)
        refused(client, lambda: client.debug("wire", "", True, 1.0), None, leader)


def sink_worker(client: Any, tid: str) -> tuple[str, int]:
    """(host, port) of one worker running the sink, as Storm's UI names it."""
    return min(
        (e.host, e.port) for e in client.getTopologyInfo(tid).executors if e.component_id == "sink"
    )


def now_ms() -> int:
    return int(time.time() * 1000)


@pytest.mark.parametrize("idl", sorted(IDLS))
def test_profiling_requests_are_stored_listed_and_refused_as_storm_does(cluster, idl):
    """Storm's UI starts profiling with a JPROFILE_STOP request due at the profiler's end and
    lists it with getComponentPendingProfileActions; a JPROFILE_STOP due now stops it."""
    api = IDLS[idl]
    stop = api.ProfileAction.JPROFILE_STOP
    with storm_client(cluster, idl, "leader") as client:
        tid = {t.name: t.id for t in client.getClusterInfo().topologies}["wire"]
        host, port = sink_worker(client, tid)
        until = now_ms() + 600_000
        running = api.ProfileRequest(api.NodeInfo(node=host, port={port}), stop, until)
        client.setWorkerProfiler(tid, running)
        elsewhere = api.ProfileRequest(api.NodeInfo(node="elsewhere", port={port}), stop, until)
        client.setWorkerProfiler(tid, elsewhere)  # stored, but no sink runs there
        [listed] = client.getComponentPendingProfileActions(tid, "sink", stop)
        assert (listed.nodeInfo.node, set(listed.nodeInfo.port), listed.time_stamp) == (
            host,
            {port},
            until,
        )
        assert missing_required(listed) == []
        assert (
            client.getComponentPendingProfileActions(tid, "sink", api.ProfileAction.JMAP_DUMP) == []
        )
        assert client.getComponentPendingProfileActions(tid, "nope", stop) == []
        for call, text in [
            (lambda: client.setWorkerProfiler("nope", running), "nope"),
            (lambda: client.getComponentPendingProfileActions("nope", "sink", stop), "nope"),
            (
                lambda: client.setWorkerProfiler(
                    tid, api.ProfileRequest(api.NodeInfo(node=host, port={1, 2}), stop, until)
                ),
                "exactly one port",
            ),
        ]:
            refused(client, call, None, text)
    with storm_client(cluster, idl, "standby") as client:
        assert client.getComponentPendingProfileActions(tid, "sink", stop) == [listed]
        leader = f"127.0.0.1:{ports(cluster)['leader']}"
        refused(client, lambda: client.setWorkerProfiler(tid, running), None, leader)
    with storm_client(cluster, idl, "leader", "mallory") as client:
        for operation, call in {
            "setWorkerProfiler": lambda: client.setWorkerProfiler(tid, running),
            "getComponentPendingProfileActions": lambda: client.getComponentPendingProfileActions(
                tid, "sink", stop
            ),
        }.items():
            refused(client, call, None, f"mallory is not authorized to {operation}")
    with storm_client(cluster, idl, "leader") as client:
        done = api.ProfileRequest(api.NodeInfo(node=host, port={port}), stop, now_ms())
        client.setWorkerProfiler(tid, done)  # stop now: no longer pending
        assert client.getComponentPendingProfileActions(tid, "sink", stop) == []


@pytest.mark.parametrize("idl", sorted(IDLS))
def test_new_credentials_are_merged_kept_apart_from_the_keys_and_refused_as_storm_does(
    cluster, idl
):
    api = IDLS[idl]
    layout = ZkLayout(cluster.base_conf_full()["storm.zookeeper.root"])
    with storm_client(cluster, idl, "leader") as client:
        tid = {t.name: t.id for t in client.getClusterInfo().topologies}["wire"]
        keys_before = zk_read(cluster, layout.credentials(tid))
        client.uploadNewCredentials("wire", api.Credentials(creds={"a": f"{idl}-1", "b": "x"}))
        client.uploadNewCredentials("wire", api.Credentials(creds={"a": f"{idl}-2"}))
        stored = uc.decode(zk_read(cluster, layout.usercredentials(tid)), "creds")
        assert stored == {"a": f"{idl}-2", "b": "x"}  # merged, as Storm merges
        assert zk_read(cluster, layout.credentials(tid)) == keys_before  # CURVE keys untouched
        refused(
            client,
            lambda: client.uploadNewCredentials("nope", api.Credentials(creds={})),
            api.NotAliveException,
            "nope",
        )
        if any(f[1] == "topoOwner" for f in api.Credentials.thrift_spec.values()):  # Storm 2
            other = api.Credentials(creds={"a": "b"}, topoOwner="mallory")
            refused(
                client,
                lambda: client.uploadNewCredentials("wire", other),
                api.AuthorizationException,
                "mallory",
            )
        huge = api.Credentials(creds={"big": "x" * (uc.MAX_BYTES + 1)})
        refused(
            client,
            lambda: client.uploadNewCredentials("wire", huge),
            api.InvalidTopologyException,
            "exceed",
        )
    with storm_client(cluster, idl, "leader", "mallory") as client:
        refused(
            client,
            lambda: client.uploadNewCredentials("wire", api.Credentials(creds={"a": "evil"})),
            api.AuthorizationException,
            "mallory is not authorized to uploadNewCredentials",
        )
    with storm_client(cluster, idl, "standby") as client:
        leader = f"127.0.0.1:{ports(cluster)['leader']}"
        refused(
            client,
            lambda: client.uploadNewCredentials("wire", api.Credentials(creds={"a": "s"})),
            None,
            leader,
        )
    assert uc.decode(zk_read(cluster, layout.usercredentials(tid)), "creds")["a"] == f"{idl}-2"


def zk_read(cluster: LocalCluster, path: str) -> bytes:
    zk = cluster.zk_client("nimbus")
    try:
        return zk.get(path)[0]
    finally:
        zk.stop()
        zk.close()


@pytest.mark.parametrize("role", ["leader", "standby"])
def test_storm2_daemon_calls_are_refused_as_storm_refuses_users_and_never_served(cluster, role):
    """squall's supervisors use ZooKeeper: a user gets Storm's AuthorizationException (these
    are supervisor commands), an admin an UNKNOWN_METHOD naming the call."""
    api = IDLS["storm2"]
    beat = api.SupervisorWorkerHeartbeat(storm_id="wire", executors=[], time_secs=0)
    beats = api.SupervisorWorkerHeartbeats(supervisor_id="s", worker_heartbeats=[beat])
    metrics = api.WorkerMetrics(
        topologyId="wire", port=1, hostname="h", metricList=api.WorkerMetricList(metrics=[])
    )
    calls = {
        "getSupervisorAssignments": lambda c: c.getSupervisorAssignments("s"),
        "sendSupervisorWorkerHeartbeats": lambda c: c.sendSupervisorWorkerHeartbeats(beats),
        "processWorkerMetrics": lambda c: c.processWorkerMetrics(metrics),
    }
    with storm_client(cluster, "storm2", role, "mallory") as client:
        for operation, call in calls.items():
            declared = None if operation == "processWorkerMetrics" else api.AuthorizationException
            refused(
                client,
                functools.partial(call, client),
                declared,
                f"mallory is not authorized to {operation}",
            )
        tid_beat = api.SupervisorWorkerHeartbeat(
            storm_id=client.getTopologySummaryByName("wire").id, executors=[], time_secs=0
        )
        refused(
            client,
            lambda: client.sendSupervisorWorkerHeartbeat(tid_beat),
            api.AuthorizationException,
            "mallory is not authorized to sendSupervisorWorkerHeartbeat",
        )
        gone = api.SupervisorWorkerHeartbeat(storm_id="nope", executors=[], time_secs=0)
        refused(
            client,
            lambda: client.sendSupervisorWorkerHeartbeat(gone),
            api.NotAliveException,
            "nope",
        )
    with storm_client(cluster, "storm2", role) as client:
        calls["sendSupervisorWorkerHeartbeat"] = lambda c: c.sendSupervisorWorkerHeartbeat(tid_beat)
        for operation, call in calls.items():
            with pytest.raises(TApplicationException) as info:
                call(client)
            assert info.value.type == TApplicationException.UNKNOWN_METHOD
            assert operation in info.value.message and "ZooKeeper" in info.value.message
            assert client.getLeader().isLeader


@pytest.mark.parametrize("role", ["leader", "standby"])
@pytest.mark.parametrize("idl", sorted(IDLS))
def test_ui_and_cli_reads_decode_with_every_required_field(cluster, idl, role):
    """Storm's UI and CLI reads, each where the IDL has it, from both nimbuses: Storm's
    required fields all present, unknown names NotAliveException."""
    api = IDLS[idl]
    has = set(api.Nimbus.thrift_services)
    with storm_client(cluster, idl, role) as client:
        info = client.getClusterInfo()
        tid = {t.name: t.id for t in info.topologies}["wire"]
        supervisor = info.supervisors[0].supervisor_id
        options = api.GetInfoOptions(num_err_choice=api.NumErrorsChoice.ONE)
        replies = {
            "getTopologyInfoWithOpts": client.getTopologyInfoWithOpts(tid, options),
            "getTopologyPageInfo": client.getTopologyPageInfo(tid, ":all-time", False),
            "getComponentPageInfo": client.getComponentPageInfo(tid, "sink", ":all-time", False),
            "getSupervisorPageInfo": client.getSupervisorPageInfo(supervisor, None, False),
            "getTopologyHistory": client.getTopologyHistory(""),
        }
        if "getTopologySummaries" in has:  # Storm 2's
            replies |= {
                "getTopologySummaries": client.getTopologySummaries(),
                "getTopologySummaryByName": client.getTopologySummaryByName("wire"),
                "getTopologySummary": client.getTopologySummary(tid),
                "getTopologyInfoByName": client.getTopologyInfoByName("wire"),
                "getTopologyInfoByNameWithOpts": client.getTopologyInfoByNameWithOpts(
                    "wire", options
                ),
                "getOwnerResourceSummaries": client.getOwnerResourceSummaries(None),
            }
        assert missing_required(list(replies.values())) == []
        assert replies["getTopologyPageInfo"].id_to_bolt_agg_stats["sink"].common_stats
        assert replies["getComponentPageInfo"].num_executors == 2
        assert tid in replies["getTopologyHistory"].topo_ids
        assert replies["getSupervisorPageInfo"].worker_summaries
        unknown = [
            lambda: client.getTopologyInfoWithOpts("nope", options),
            lambda: client.getTopologyPageInfo("nope", ":all-time", False),
            lambda: client.getComponentPageInfo(tid, "nope", ":all-time", False),
            lambda: client.getSupervisorPageInfo("nope", None, False),
        ]
        if "getTopologySummaries" in has:
            unknown += [
                lambda: client.getTopologySummaryByName("nope"),
                lambda: client.getTopologySummary("nope"),
                lambda: client.getTopologyInfoByName("nope"),
            ]
        for call in unknown:
            refused(client, call, api.NotAliveException, "nope")


@pytest.mark.parametrize("idl", sorted(IDLS))
def test_blobstore_calls_from_storm_clients_on_the_leader_and_the_standby(cluster, idl):
    api = IDLS[idl]
    key = f"wire-blob-{idl}"
    meta = api.SettableBlobMeta(acl=[])
    data = b"storm bytes " * 1000
    with storm_client(cluster, idl, "leader") as client:
        session = client.beginCreateBlob(key, meta)
        client.uploadBlobChunk(session, data[:5000])
        client.uploadBlobChunk(session, data[5000:])
        client.finishBlobUpload(session)
        refused(
            client, lambda: client.beginCreateBlob(key, meta), api.KeyAlreadyExistsException, key
        )
        refused(
            client, lambda: client.getBlobMeta("no-such-blob"), api.KeyNotFoundException, "no-such"
        )
        # Storm answers a RuntimeException here; squall a declared error naming the session
        refused(
            client,
            lambda: client.uploadBlobChunk("no-such-session", b"x"),
            api.AuthorizationException,
            "no-such",
        )
        assert missing_required(client.getBlobMeta(key)) == []
    with storm_client(cluster, idl, "standby") as client:
        begun = client.beginBlobDownload(key)
        read = b""
        for _ in range(100):
            chunk = client.downloadBlobChunk(begun.session)
            if not chunk:
                break
            read += chunk
        assert read == data and begun.version == client.getBlobMeta(key).version
        assert key in client.listBlobs("").keys
        leader = f"127.0.0.1:{ports(cluster)['leader']}"
        refused(client, lambda: client.beginCreateBlob(f"{key}-2", meta), None, leader)
        refused(client, lambda: client.deleteBlob(key), None, leader)
    with storm_client(cluster, idl, "leader", "mallory") as client:
        refused(client, lambda: client.getBlobMeta(key), api.AuthorizationException, "mallory")
    with storm_client(cluster, idl, "leader") as client:
        client.deleteBlob(key)
        refused(client, lambda: client.getBlobMeta(key), api.KeyNotFoundException, key)


def test_storm1_log_levels_and_debug_on_the_leader_and_the_standby(cluster):
    """Storm 1.x's IDL has the same log and debug calls as Storm 2's (tested above)."""
    api = IDLS["storm1_streamparse"]
    update = api.LogLevel(action=api.LogLevelAction.UPDATE, target_log_level="INFO")
    with storm_client(cluster, "storm1_streamparse", "leader") as client:
        client.setLogConfig("wire", api.LogConfig(named_logger_level={"wire.storm1": update}))
        assert (
            client.getLogConfig("wire").named_logger_level["wire.storm1"].target_log_level == "INFO"
        )
        client.debug("wire", "sink", True, 5.0)
        tid = {t.name: t.id for t in client.getClusterInfo().topologies}["wire"]
        assert client.getTopologyInfo(tid).component_debug["sink"].samplingpct == 5.0
        client.debug("wire", "sink", False, 0.0)
        refused(client, lambda: client.setLogConfig("nope", api.LogConfig()), None, "nope")
    with storm_client(cluster, "storm1_streamparse", "standby") as client:
        assert "wire.storm1" in client.getLogConfig("wire").named_logger_level
        leader = f"127.0.0.1:{ports(cluster)['leader']}"
        refused(client, lambda: client.debug("wire", "", True, 1.0), None, leader)


def worker_files(cluster: LocalCluster, pattern: str) -> list[Path]:
    return sorted(cluster.directory.glob(f"**/{pattern}"))


def worker_log(cluster: LocalCluster, tid: str, port: int) -> str:
    return "".join(
        p.read_text(errors="replace") for p in worker_files(cluster, f"worker-{tid}-{port}.log*")
    )


def test_workers_carry_out_profiling_requests_and_take_them(cluster):
    """JSTACK_DUMP, JMAP_DUMP and a profile (start, dump, stop) as files beside the worker's
    log; each request, once done, is no longer pending."""
    api = IDLS["storm2"]
    actions = api.ProfileAction
    with storm_client(cluster, "storm2", "leader") as client:
        tid = client.getTopologySummaryByName("wire").id
        host, port = sink_worker(client, tid)
        node = api.NodeInfo(node=host, port={port})
        prefix = f"worker-{tid}-{port}"

        def ask(action: int, at: int | None = None) -> None:
            client.setWorkerProfiler(tid, api.ProfileRequest(node, action, at or now_ms()))

        def taken(action: int) -> bool:
            return client.getComponentPendingProfileActions(tid, "sink", action) == []

        ask(actions.JSTACK_DUMP)
        ask(actions.JMAP_DUMP)
        wait_for(lambda: worker_files(cluster, f"{prefix}-jstack-*.txt"), 60, "a thread dump")
        wait_for(lambda: worker_files(cluster, f"{prefix}-heap-*.txt"), 60, "a heap summary")
        assert taken(actions.JSTACK_DUMP) and taken(actions.JMAP_DUMP)
        [stacks] = worker_files(cluster, f"{prefix}-jstack-*.txt")
        assert '"MainThread"' in stacks.read_text()
        assert (
            "objects tracked by gc" in worker_files(cluster, f"{prefix}-heap-*.txt")[0].read_text()
        )
        profiles = len(worker_files(cluster, f"{prefix}-profile-*.txt"))
        started = worker_log(cluster, tid, port).count("profiling every thread")
        ask(actions.JPROFILE_STOP, now_ms() + 600_000)  # Storm's UI: profile for 10 minutes
        wait_for(
            lambda: worker_log(cluster, tid, port).count("profiling every thread") > started,
            60,
            "profiling to start",
        )
        ask(actions.JPROFILE_STOP)  # stop now
        wait_for(
            lambda: len(worker_files(cluster, f"{prefix}-profile-*.txt")) > profiles,
            60,
            "the profile",
        )
        assert taken(actions.JPROFILE_STOP)


def test_uploaded_credentials_reach_the_components_that_listen(cluster):
    with storm_client(cluster, "storm2", "leader") as client:
        tid = client.getTopologySummaryByName("wire").id
        host, port = sink_worker(client, tid)
        client.uploadNewCredentials("wire", IDLS["storm2"].Credentials(creds={"zz-new": "secret"}))
    wait_for(
        lambda: "'zz-new']" in worker_log(cluster, tid, port),
        60,
        "the sink to get the credentials",
    )
    assert "secret" not in worker_log(cluster, tid, port)
    layout = ZkLayout(cluster.base_conf_full()["storm.zookeeper.root"])
    supervisor = cluster.zk_client("supervisor")  # the workers' login: reads, never writes
    try:
        assert supervisor.get(layout.usercredentials(tid))[0]
        with pytest.raises(NoAuthError):
            supervisor.set(layout.usercredentials(tid), b"{}")
        with pytest.raises(NoAuthError):
            supervisor.create(f"{layout.profilerconfig(tid)}/forged", b"{}")
    finally:
        supervisor.stop()
        supervisor.close()


class CredentialsAtSubmit:
    """A squall client whose submits carry Storm's SubmitOptions.creds."""

    def __init__(self, client: Any, creds: Any) -> None:
        self.client, self.creds = client, creds

    def __getattr__(self, name: str) -> Any:
        return getattr(self.client, name)

    def submitTopologyWithOpts(self, name, location, conf, topology, options):
        options.creds = self.creds
        return self.client.submitTopologyWithOpts(name, location, conf, topology, options)


def test_credentials_given_at_submit_are_stored_and_go_with_the_topology(cluster):
    layout = ZkLayout(cluster.base_conf_full()["storm.zookeeper.root"])
    conf = cluster.client_conf()
    with cluster.client() as client:
        forged = CredentialsAtSubmit(client, T.Credentials(creds={"k": "v"}, topoOwner="mallory"))
        with pytest.raises(T.AuthorizationException, match="mallory"):
            submit_file(forged, TINY, conf, name="wire-creds", inactive=True)
        assert client.isTopologyNameAllowed("wire-creds")  # refused before it was made
        given = CredentialsAtSubmit(client, T.Credentials(creds={"at-submit": "1"}))
        submit_file(given, TINY, conf, name="wire-creds", inactive=True)
        tid = client.getTopologySummaryByName("wire-creds").id
        path = layout.usercredentials(tid)
        assert uc.decode(zk_read(cluster, path), path) == {"at-submit": "1"}
        client.killTopologyWithOpts("wire-creds", T.KillOptions(wait_secs=0))
        wait_for(lambda: client.isTopologyNameAllowed("wire-creds"), 60, "wire-creds' removal")
    nimbus = cluster.zk_client("nimbus")
    try:
        wait_for(lambda: not nimbus.exists(path), 30, f"{path} to be removed")
    finally:
        nimbus.stop()
        nimbus.close()


def test_a_restart_request_restarts_the_worker(cluster):
    """Runs last: the worker exits and its supervisor starts it again."""
    api = IDLS["storm2"]
    with storm_client(cluster, "storm2", "leader") as client:
        tid = client.getTopologySummaryByName("wire").id
        host, port = sink_worker(client, tid)
        node = api.NodeInfo(node=host, port={port})
        client.setWorkerProfiler(
            tid, api.ProfileRequest(node, api.ProfileAction.JVM_RESTART, now_ms())
        )
        wait_for(
            lambda: worker_log(cluster, tid, port).count(f"worker {tid}:{port} running") >= 2,
            90,
            "the worker to start again",
        )
        assert "restarting on request (JVM_RESTART)" in worker_log(cluster, tid, port)
        assert (
            client.getComponentPendingProfileActions(tid, "sink", api.ProfileAction.JVM_RESTART)
            == []
        )
    with cluster.client() as squall_client:
        wait_for(lambda: running(squall_client, "wire"), 120, "wire's executors to beat again")
        info = squall_client.getTopologyInfo(tid)
        errors = [e.error for es in info.errors.values() for e in es]
        assert not any("exited with code" in e for e in errors), errors  # asked: no failure
