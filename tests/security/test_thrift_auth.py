"""Thrift authentication and authorization (issue #11 item 1) against a real cluster: nimbus
speaks TLS and wants a client certificate from the cluster CA; the certificate's CN is the
principal Storm's SimpleACLAuthorizer judges. The attacker of the issue (a plain thriftpy2
client that ran kill, rebalance, submit and downloaded any topology's code) gets nothing."""

import json
import os
import socket
import ssl
import subprocess
import sys
from pathlib import Path

import pytest
import thriftpy2
from thriftpy2.protocol import TBinaryProtocolFactory
from thriftpy2.rpc import make_client
from thriftpy2.thrift import TApplicationException
from thriftpy2.transport import TFramedTransportFactory

import squall
import squall.topology
from squall import thrift_api as T
from squall.client import download, nimbus_client
from squall.code_package import CODE_FILE
from squall.config import cluster_conf
from squall.local import LocalCluster, topology_id, wait_for
from squall.security.certificates import ensure_credentials, issue
from squall.submit import submit_file

TINY = Path(__file__).parents[1] / "integration" / "topologies" / "tiny.py"
API = thriftpy2.load(
    str(Path(squall.__file__).parent / "squall.thrift"), module_name="attacker_squall_thrift"
)
USERS = ["alice", "bob", "carol"]


@pytest.fixture(scope="module")
def cluster(tmp_path_factory):
    conf = {"nimbus.users": USERS}
    with LocalCluster(tmp_path_factory.mktemp("secure"), supervisors=1, conf=conf) as c:
        for name in [*USERS, "mallory"]:
            issue(c.base_conf_full(), name)
        yield c


@pytest.fixture(scope="module")
def alices(cluster):
    """A running topology alice submitted (trying to pass itself off as bob's)."""
    with cluster.client("alice") as client:
        overrides = {"topology.submitter.principal": "bob", "topology.submitter.user": "bob"}
        submit_file(client, TINY, cluster.client_conf(), name="alices", overrides=overrides)
        tid = topology_id(client, "alices")
        wait_for(lambda: running(client, tid), 120, "alice's topology to run")
    return tid


def running(client, tid) -> bool:
    """Every executor beats: the supervisor downloaded the code as "supervisor"."""
    return all(e.stats is not None for e in client.getTopologyInfo(tid).executors)


def raw_client(cluster, context):
    return make_client(
        API.Nimbus,
        "127.0.0.1",
        cluster.nimbus_port,
        proto_factory=TBinaryProtocolFactory(),
        trans_factory=TFramedTransportFactory(),
        timeout=10_000,
        ssl_context=context,
    )


def refused(cluster, context) -> None:
    """A connection with `context` gets no answer to any call; nimbus serves on."""
    with pytest.raises((OSError, ssl.SSLError, thriftpy2.transport.TTransportException)):
        client = raw_client(cluster, context)
        try:
            client.getClusterInfo()
        finally:
            client.close()
    with cluster.client() as client:
        assert client.getClusterInfo().supervisors


def credentials(cluster) -> Path:
    return cluster.credentials_dir


def test_a_plain_thrift_client_is_refused(cluster):
    """Refused with an answer it can print (tests/security/test_tls_refusals.py), and nothing
    run."""
    client = raw_client(cluster, None)
    try:
        with pytest.raises(TApplicationException, match="requires TLS"):
            client.killTopology("anything")
    finally:
        client.close()
    with cluster.client() as admin:
        assert admin.getClusterInfo().supervisors


def test_a_client_without_a_certificate_is_refused_at_the_handshake(cluster):
    context = ssl.create_default_context(cafile=credentials(cluster) / "ca.pem")
    refused(cluster, context)


def test_a_certificate_from_another_ca_is_refused(cluster, tmp_path):
    other = ensure_credentials(cluster_conf(**{"storm.local.dir": str(tmp_path)}))
    context = ssl.create_default_context(cafile=credentials(cluster) / "ca.pem")
    context.load_cert_chain(other / "admin.pem", other / "admin.key")  # CN admin, wrong CA
    refused(cluster, context)


def test_a_client_stuck_in_the_handshake_blocks_nobody(cluster):
    with socket.create_connection(("127.0.0.1", cluster.nimbus_port), timeout=10) as idle:
        idle.sendall(b"\x16\x03\x01")  # the first bytes of a ClientHello, then nothing
        with cluster.client() as client:
            assert client.getLeader().isLeader


def test_nimbus_presents_a_certificate_the_client_checks(cluster, tmp_path):
    """A client that trusts another CA refuses nimbus: no man in the middle."""
    other = ensure_credentials(cluster_conf(**{"storm.local.dir": str(tmp_path)}))
    context = ssl.create_default_context(cafile=other / "ca.pem")
    context.load_cert_chain(credentials(cluster) / "admin.pem", credentials(cluster) / "admin.key")
    with pytest.raises(thriftpy2.transport.TTransportException) as failed:
        raw_client(cluster, context)
    assert isinstance(failed.value.__context__, ssl.SSLCertVerificationError)


def test_a_user_not_in_nimbus_users_cannot_submit_or_upload(cluster):
    """mallory holds a valid certificate but is not in nimbus.users: every user command,
    finding the leader included (Storm's getClusterInfo permission), is refused."""
    with pytest.raises(T.AuthorizationException, match="mallory.*getLeader"):
        cluster.leader("mallory")
    client = raw_client(cluster, _context(cluster, "mallory"))
    try:
        with pytest.raises(API.AuthorizationException, match="mallory.*fileUpload"):
            client.beginFileUpload()
        with pytest.raises(API.AuthorizationException, match="mallory.*submitTopology"):
            client.submitTopology("x", "upload-x", "{}", API.StormTopology(spouts={}, bolts={}))
        with pytest.raises(API.AuthorizationException, match="mallory.*getClusterInfo"):
            client.getClusterInfo()
    finally:
        client.close()
    with cluster.client() as admin:
        assert admin.isTopologyNameAllowed("x")


def test_nimbus_records_the_submitter_whatever_the_client_said(cluster, alices):
    with cluster.client("alice") as client:
        conf = json.loads(client.getTopologyConf(alices))
    assert conf["topology.submitter.principal"] == "alice"
    assert conf["topology.submitter.user"] == "alice"
    with (
        cluster.client("alice") as client,
        pytest.raises(T.InvalidTopologyException, match="recorded by nimbus"),
    ):
        client.setTopologyConf("alices", "topology.submitter.principal", '"bob"')


def test_another_user_cannot_touch_or_read_a_topology(cluster, alices):
    with cluster.client("bob") as client:
        calls = {
            "killTopology": lambda: client.killTopology("alices"),
            "rebalance": lambda: client.rebalance("alices", T.RebalanceOptions(wait_secs=0)),
            "deactivate": lambda: client.deactivate("alices"),
            "activate": lambda: client.activate("alices"),
            "setTopologyConf": lambda: client.setTopologyConf("alices", "x.y", "1"),
            "getTopologyConf": lambda: client.getTopologyConf(alices),
            "getTopologyInfo": lambda: client.getTopologyInfo(alices),
            "getTopology": lambda: client.getTopology(alices),
            "fileDownload": lambda: client.beginFileDownload(f"{alices}/{CODE_FILE}"),
        }
        for operation, call in calls.items():
            with pytest.raises(T.AuthorizationException) as denied:
                call()
            assert "bob" in denied.value.msg and operation in denied.value.msg
        names = [t.name for t in client.getClusterInfo().topologies]
    assert names == ["alices"]  # still there, and still running as alice left it
    with cluster.client() as client:
        assert {t.name: t.status for t in client.getClusterInfo().topologies} == {
            "alices": "ACTIVE"
        }


def test_a_denial_is_typed_not_an_internal_error(cluster, alices):
    client = raw_client(cluster, _context(cluster, "bob"))
    try:
        with pytest.raises(API.AuthorizationException):
            client.killTopology("alices")
        with pytest.raises(API.NotAliveException):  # the connection still serves
            client.killTopology("no-such-topology")
    finally:
        client.close()
    assert not issubclass(T.AuthorizationException, TApplicationException)


def _context(cluster, name):
    context = ssl.create_default_context(cafile=credentials(cluster) / "ca.pem")
    directory = credentials(cluster)
    context.load_cert_chain(directory / f"{name}.pem", directory / f"{name}.key")
    return context


def test_readonly_users_read_and_topology_users_act(cluster, alices):
    with cluster.client("alice") as client:
        client.setTopologyConf("alices", "topology.readonly.users", '["carol"]')
    with cluster.client("carol") as client:
        assert json.loads(client.getTopologyConf(alices))["topology.readonly.users"] == ["carol"]
        with pytest.raises(T.AuthorizationException, match="carol.*deactivate"):
            client.deactivate("alices")
    with cluster.client("alice") as client:
        client.setTopologyConf("alices", "topology.users", '["bob"]')
    with cluster.client("bob") as client:
        client.deactivate("alices")
        assert client.getTopologyInfo(alices).status == "INACTIVE"
        client.activate("alices")
        assert client.getTopologyInfo(alices).status == "ACTIVE"


def test_the_supervisor_identity_downloads_code_but_cannot_kill(cluster, alices, tmp_path):
    with cluster.client("supervisor") as client:
        download(client, f"{alices}/{CODE_FILE}", tmp_path / CODE_FILE)
        assert (tmp_path / CODE_FILE).stat().st_size > 0
        for call in (
            lambda: client.killTopology("alices"),
            lambda: client.getClusterInfo(),
            lambda: client.beginFileUpload(),
            lambda: client.getNimbusConf(),
        ):
            with pytest.raises(T.AuthorizationException, match="supervisor"):
                call()


def test_admin_may_do_anything(cluster, alices, tmp_path):
    with cluster.client() as client:  # security.user: admin
        conf = json.loads(client.getNimbusConf())
        assert conf["nimbus.users"] == USERS
        download(client, f"{alices}/{CODE_FILE}", tmp_path / CODE_FILE)
        client.rebalance("alices", T.RebalanceOptions(wait_secs=0))
        client.killTopologyWithOpts("alices", T.KillOptions(wait_secs=0))
        wait_for(lambda: client.isTopologyNameAllowed("alices"), 60, "alices to be removed")


def cli(cluster, *args: str, conf_file: Path | None = None) -> subprocess.CompletedProcess:
    config = str(conf_file or cluster.client_conf_file())
    command = [sys.executable, "-m", "squall.cli", "--config", config, *args]
    wide = {**os.environ, "COLUMNS": "1000"}  # rich wraps its lines at the terminal width
    return subprocess.run(command, capture_output=True, text=True, timeout=120, env=wide)


def test_the_cli_authenticates_and_says_clearly_when_it_cannot(cluster, tmp_path):
    listed = cli(cluster, "list")
    assert listed.returncode == 0, listed.stderr
    assert "supervisor1" in listed.stdout
    conf_file = tmp_path / "dave.yaml"
    conf_file.write_text(cluster.client_conf_file().read_text() + "security.user: dave\n")
    missing = cli(cluster, "list", conf_file=conf_file)
    output = missing.stderr
    assert missing.returncode == 1
    assert "dave.pem" in output and "squall credentials issue dave" in output
    assert "Traceback" not in output
    issued = cli(cluster, "credentials", "issue", "dave")
    assert issued.returncode == 0, issued.stderr
    # authenticated now, but not in nimbus.users: a one-line AuthorizationException
    denied = cli(cluster, "list", conf_file=conf_file)
    assert denied.returncode == 1
    assert "AuthorizationException" in denied.stderr and "dave" in denied.stderr
    assert "Traceback" not in denied.stderr


def test_open_mode_needs_no_credentials(tmp_path):
    """security: false is Storm's open mode: plain Thrift, no files, anyone may do anything,
    and supervisors fetch code without certificates."""
    with LocalCluster(tmp_path, supervisors=1, conf={"security": False}) as open_cluster:
        assert not open_cluster.credentials_dir.exists()
        conf = open_cluster.client_conf()
        host, port = open_cluster.leader()
        with nimbus_client(host, port, conf=conf) as client:
            submit_file(client, TINY, conf, name="open")
            tid = topology_id(client, "open")
            wait_for(lambda: running(client, tid), 120, "the open topology to run")
        attacker = raw_client(open_cluster, None)
        try:
            attacker.killTopologyWithOpts("open", API.KillOptions(wait_secs=0))
        finally:
            attacker.close()
        with nimbus_client(host, port, conf=conf) as client:
            wait_for(lambda: client.isTopologyNameAllowed("open"), 60, "open to be removed")


def test_daemons_refuse_to_start_insecurely(cluster, tmp_path):
    """A supervisor without its certificate, and a nimbus with an authorizer it does not
    know, stop at once with one clear line (never an open cluster)."""
    supervisor_conf = tmp_path / "supervisor.yaml"
    supervisor_conf.write_text(f"security.dir: {tmp_path / 'empty'}\n")
    supervisor = cli(cluster, "supervisor", conf_file=supervisor_conf)
    assert supervisor.returncode == 1
    assert "supervisor.pem is missing" in supervisor.stderr
    nimbus_conf = tmp_path / "nimbus.yaml"
    nimbus_conf.write_text(
        f"storm.local.dir: {tmp_path / 'nimbus'}\nnimbus.authorizer: com.example.AllowAll\n"
    )
    nimbus = cli(cluster, "nimbus", conf_file=nimbus_conf)
    assert nimbus.returncode == 1
    assert "unknown authorizer 'com.example.AllowAll'" in nimbus.stderr
    assert "Traceback" not in supervisor.stderr + nimbus.stderr


def test_an_upload_belongs_to_the_identity_that_began_it(cluster):
    """bob, a user in his own right, can neither append to, finish nor submit alice's upload
    (a refused submit would have discarded it); alice still can."""
    code = Path(__file__).parents[1] / "integration" / "topologies" / "tiny.py"
    topology = squall.topology.load_topology_file(code).to_thrift()
    with cluster.client("alice") as alice, cluster.client("bob") as bob:
        location = alice.beginFileUpload()
        alice.uploadChunk(location, b"alice's code")
        with pytest.raises(T.AuthorizationException, match="another identity"):
            bob.uploadChunk(location, b"bob's code")
        with pytest.raises(T.AuthorizationException, match="another identity"):
            bob.finishFileUpload(location)
        with pytest.raises(T.AuthorizationException, match="another identity"):
            bob.submitTopology("stolen", location, "{}", topology)
        assert topology_id(alice, "stolen") is None
        alice.finishFileUpload(location)  # untouched by bob's tries
        assert bob.beginFileUpload() != location
