"""`squall proxy` (#34 item 4): a Storm client that speaks only plain Thrift (Storm 2.8's IDL,
not squall's) works a secure cluster through the proxy, as the proxy's user: nimbus records
that user's principal as the owner, its authorizer judges that user, and the leader the
client is told of is the proxy, so it stays on it. The proxy listens on loopback only unless
told otherwise, and bounds request frames as nimbus does."""

from __future__ import annotations

import json
import os
import re
import socket
import struct
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest
import thriftpy2
from thriftpy2.protocol import TBinaryProtocolFactory
from thriftpy2.rpc import make_client
from thriftpy2.transport import TFramedTransportFactory

from squall import thrift_api as T
from squall.local import LocalCluster, topology_id, wait_for
from squall.processes import terminate
from squall.security.certificates import issue
from squall.submit import submit_file

from .conftest import TOPOLOGIES

STORM = thriftpy2.load(
    str(Path(__file__).parents[1] / "storm_idl" / "storm2.thrift"), module_name="proxy_thrift"
)
LISTENING = re.compile(r"plain Thrift on 127\.0\.0\.1:(\d+) -> nimbus leader (\S+) as 'alice'")


@pytest.fixture(scope="module")
def cluster(tmp_path_factory):
    conf = {"nimbus.users": ["alice"]}
    with LocalCluster(tmp_path_factory.mktemp("proxy"), supervisors=1, conf=conf) as c:
        issue(c.base_conf_full(), "alice")
        yield c


def _command(conf_file: Path, *args: str) -> list[str]:
    return [sys.executable, "-m", "squall.cli", "--config", str(conf_file), "proxy", *args]


def alice_conf(cluster: LocalCluster) -> Path:
    path = cluster.directory / "alice.yaml"
    path.write_text(cluster.client_conf_file().read_text() + "security.user: alice\n")
    return path


@pytest.fixture(scope="module")
def proxy_port(cluster) -> Iterator[int]:
    """`squall proxy --port 0` as alice; its port, read from its startup line."""
    out = cluster.directory / "proxy.out"
    with out.open("wb") as sink:
        process = subprocess.Popen(
            _command(alice_conf(cluster), "--port", "0"),
            stdout=sink,
            stderr=subprocess.STDOUT,
            stdin=subprocess.DEVNULL,
            env={**os.environ, "COLUMNS": "1000"},
        )
    try:

        def listening() -> re.Match | None:
            if process.poll() is not None:
                raise AssertionError(f"squall proxy exited: {out.read_text()}")
            return LISTENING.search(out.read_text())

        match = wait_for(listening, 60, "squall proxy's startup line")
        assert match.group(2) == f"127.0.0.1:{cluster.leader()[1]}"
        yield int(match.group(1))
    finally:
        terminate(process, 10)


def plain_client(service, port: int):
    return make_client(
        service.Nimbus,
        "127.0.0.1",
        port,
        proto_factory=TBinaryProtocolFactory(),
        trans_factory=TFramedTransportFactory(),
        timeout=30_000,
        ssl_context=None,
    )


def test_a_storm_client_works_a_secure_cluster_as_the_proxy_user(cluster, proxy_port):
    storm = plain_client(STORM, proxy_port)
    squall_client = plain_client(T, proxy_port)  # submit: squall's Python components
    try:
        info = storm.getClusterInfo()
        assert [s.host for s in info.supervisors] == ["127.0.0.1"]
        leader = next(n for n in info.nimbuses if n.isLeader)
        assert (leader.host, leader.port) == ("127.0.0.1", proxy_port)  # stays on the proxy
        assert (storm.getLeader().host, storm.getLeader().port) == ("127.0.0.1", proxy_port)
        submit_file(squall_client, TOPOLOGIES / "tiny.py", cluster.client_conf(), name="proxied")
        tid = topology_id(squall_client, "proxied")
        assert tid is not None
        conf = json.loads(storm.getTopologyConf(tid))
        assert conf["topology.submitter.principal"] == "alice"
        topology = storm.getTopologyInfo(tid)
        assert topology.name == "proxied"
        assert topology.owner == "alice"
        storm.killTopologyWithOpts("proxied", STORM.KillOptions(wait_secs=0))
        wait_for(lambda: storm.isTopologyNameAllowed("proxied"), 60, "proxied to be removed")
    finally:
        storm.close()
        squall_client.close()
    with cluster.client() as admin:  # the admin identity is not alice: the authorizer saw her
        summary = admin.getClusterInfo()
        assert "proxied" not in [t.name for t in summary.topologies]


def test_the_authorizer_judges_the_proxy_user(cluster, proxy_port):
    """alice may not kill the admin's topology through the proxy."""
    with cluster.client() as admin:
        submit_file(admin, TOPOLOGIES / "tiny.py", cluster.client_conf(), name="admins")
    storm = plain_client(STORM, proxy_port)
    try:
        with pytest.raises(STORM.AuthorizationException, match="alice"):
            storm.killTopologyWithOpts("admins", STORM.KillOptions(wait_secs=0))
    finally:
        storm.close()
    with cluster.client() as admin:
        assert not admin.isTopologyNameAllowed("admins")  # still there
        admin.killTopologyWithOpts("admins", T.KillOptions(wait_secs=0))


def test_a_frame_above_nimbus_max_buffer_size_ends_its_connection(cluster, proxy_port):
    limit = cluster.client_conf()["nimbus.thrift.max_buffer_size"]
    with socket.create_connection(("127.0.0.1", proxy_port), timeout=10) as sock:
        sock.sendall(struct.pack("!i", limit + 1) + b"x" * 1024)
        assert sock.recv(100) == b""
    storm = plain_client(STORM, proxy_port)
    try:
        assert storm.getClusterInfo().supervisors  # the proxy serves on
    finally:
        storm.close()


def test_the_proxy_listens_on_loopback_unless_told_otherwise(cluster):
    refused = subprocess.run(
        _command(alice_conf(cluster), "--host", "0.0.0.0", "--port", "0"),
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert refused.returncode == 2
    assert "not a loopback address" in refused.stderr and "--allow-remote" in refused.stderr


def test_streamparse_s_own_client_reads_through_the_proxy(cluster, proxy_port):
    """streamparse builds its Nimbus client itself (plain, framed, Storm 1.x's IDL)."""
    from streamparse.util import get_nimbus_client  # a test dependency (pyproject.toml)

    client = get_nimbus_client({}, host="127.0.0.1", port=proxy_port)
    info = client.getClusterInfo()
    assert [s.host for s in info.supervisors] == ["127.0.0.1"]
    assert [(n.host, n.port) for n in info.nimbuses if n.isLeader] == [("127.0.0.1", proxy_port)]
