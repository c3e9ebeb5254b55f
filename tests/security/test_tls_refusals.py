"""Certificate problems say what they are (#34 item 4, #35 item 2) against a real nimbus: a
plain Thrift client on the TLS port gets a TApplicationException it can print, at once; a
client whose certificate is expired, from another CA or missing is told so by its own check
before it connects, or as a TLS failure with nimbus at host:port (never "no nimbus leader
found"); and nimbus logs every refused handshake with its reason."""

import datetime
import os
import shutil
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
from thriftpy2.transport import TFramedTransportFactory, TTransportException

from squall.config import cluster_conf
from squall.local import LocalCluster, wait_for
from squall.security.certificates import ensure_credentials

from .cert_factory import client_certificate, foreign_supervisor_security

STORM = thriftpy2.load(
    str(Path(__file__).parents[1] / "storm_idl" / "storm2.thrift"), module_name="refusal_thrift"
)
NOW = datetime.datetime.now(datetime.timezone.utc)
DAY = datetime.timedelta(days=1)


@pytest.fixture(scope="module")
def cluster(tmp_path_factory):
    with LocalCluster(tmp_path_factory.mktemp("refusals"), supervisors=0) as c:
        yield c


@pytest.fixture(scope="module")
def other_ca(tmp_path_factory) -> Path:
    """The credentials of another cluster (its CA has the same name as this one's)."""
    return ensure_credentials(
        cluster_conf(**{"storm.local.dir": str(tmp_path_factory.mktemp("o"))})
    )


def nimbus_logged(cluster: LocalCluster, text: str) -> None:
    log = cluster.directory / "nimbus.log"
    wait_for(lambda: text in log.read_text(errors="replace"), 30, f"nimbus.log to say {text!r}")


def storm_client(cluster: LocalCluster, context: ssl.SSLContext | None):
    return make_client(
        STORM.Nimbus,
        "127.0.0.1",
        cluster.nimbus_port,
        proto_factory=TBinaryProtocolFactory(),
        trans_factory=TFramedTransportFactory(),
        timeout=5_000,  # an answer, not a wait: a late one fails as a timeout
        ssl_context=context,
    )


def test_a_plain_storm_client_is_told_tls_is_required_and_nimbus_logs_it(cluster):
    client = storm_client(cluster, None)
    try:
        with pytest.raises(TApplicationException) as refused:
            client.getClusterInfo()
    finally:
        client.close()
    message = refused.value.message
    assert "requires TLS with a client certificate" in message
    assert "squall proxy" in message and "SECURITY.md" in message
    nimbus_logged(cluster, "refused a Thrift connection from 127.0.0.1: plain Thrift client")
    with socket.create_connection(("127.0.0.1", cluster.nimbus_port), timeout=5) as http:
        http.sendall(b"GET / HTTP/1.1\r\nHost: nimbus\r\n\r\n")
        assert http.recv(100) == b""  # not Thrift: closed, not answered
    nimbus_logged(cluster, "neither TLS nor Thrift: closed")
    with cluster.client() as admin:  # nimbus serves on
        assert admin.getLeader().isLeader


def _user(cluster: LocalCluster, tmp_path: Path, label: str, ca: Path) -> Path:
    """A conf file for the `squall` command as identity alice, trusting `ca`, with alice's
    files (to be made) in their own security.dir."""
    directory = tmp_path / label
    directory.mkdir()
    shutil.copy(ca, directory / "ca.pem")
    conf_file = tmp_path / f"{label}.yaml"
    conf_file.write_text(
        cluster.client_conf_file().read_text()
        + f"security.dir: {directory}\nsecurity.user: alice\n"
    )
    return conf_file


def squall_list(conf_file: Path, *flags: str) -> subprocess.CompletedProcess:
    command = [sys.executable, "-m", "squall.cli", "--config", str(conf_file), *flags, "list"]
    wide = {**os.environ, "COLUMNS": "1000"}
    return subprocess.run(command, capture_output=True, text=True, timeout=120, env=wide)


def _refused_by_client(result: subprocess.CompletedProcess, *texts: str) -> None:
    assert result.returncode == 1, result.stdout
    for text in texts:
        assert text in result.stderr, result.stderr
    assert "no nimbus leader found" not in result.stderr
    assert "Traceback" not in result.stderr


def _handshake(cluster: LocalCluster, context: ssl.SSLContext) -> None:
    """A TLS client with `context` (no check of its own) is refused by nimbus."""
    with pytest.raises((OSError, TTransportException)):
        client = storm_client(cluster, context)
        try:
            client.getClusterInfo()
        finally:
            client.close()


def test_an_expired_certificate(cluster, tmp_path):
    ca_dir = cluster.credentials_dir
    conf_file = _user(cluster, tmp_path, "expired", ca_dir / "ca.pem")
    pem, key = client_certificate(
        ca_dir, tmp_path / "expired", "alice", not_before=NOW - 3 * DAY, not_after=NOW - DAY
    )
    _refused_by_client(
        squall_list(conf_file), f"{pem} expired on", "squall credentials issue alice"
    )
    context = ssl.create_default_context(cafile=ca_dir / "ca.pem")
    context.load_cert_chain(pem, key)
    _handshake(cluster, context)
    nimbus_logged(cluster, "from 127.0.0.1: expired certificate")


def test_a_certificate_of_another_ca(cluster, tmp_path, other_ca):
    ca_dir = cluster.credentials_dir
    # alice's certificate from the other cluster, with this cluster's ca.pem
    conf_file = _user(cluster, tmp_path, "foreign", ca_dir / "ca.pem")
    shutil.copy(other_ca / "admin.pem", tmp_path / "foreign" / "alice.pem")
    shutil.copy(other_ca / "admin.key", tmp_path / "foreign" / "alice.key")
    _refused_by_client(squall_list(conf_file), "is not signed by the CA in")
    context = ssl.create_default_context(cafile=ca_dir / "ca.pem")
    context.load_cert_chain(other_ca / "admin.pem", other_ca / "admin.key")
    _handshake(cluster, context)
    nimbus_logged(cluster, "from 127.0.0.1: unknown CA")
    # all of alice's files from the other cluster: her client refuses nimbus's certificate
    conf_file = _user(cluster, tmp_path, "wrong-ca", other_ca / "ca.pem")
    shutil.copy(other_ca / "admin.pem", tmp_path / "wrong-ca" / "alice.pem")
    shutil.copy(other_ca / "admin.key", tmp_path / "wrong-ca" / "alice.key")
    address = f"127.0.0.1:{cluster.nimbus_port}"
    wrong = squall_list(conf_file)
    _refused_by_client(wrong, f"does not trust the certificate of nimbus at {address}")
    nimbus_logged(cluster, "the client does not trust nimbus's certificate")
    verbose = squall_list(conf_file, "-v")
    assert "your certificate:" in verbose.stderr and "valid" in verbose.stderr
    assert "your certificate:" not in wrong.stderr


def test_a_missing_certificate(cluster, tmp_path):
    ca_dir = cluster.credentials_dir
    conf_file = _user(cluster, tmp_path, "missing", ca_dir / "ca.pem")
    _refused_by_client(squall_list(conf_file), "alice.pem is missing", "credentials issue alice")
    _handshake(cluster, ssl.create_default_context(cafile=ca_dir / "ca.pem"))
    nimbus_logged(cluster, "from 127.0.0.1: no certificate")


def test_a_refusal_the_client_could_not_foresee_is_a_tls_refusal_by_nimbus(
    cluster, tmp_path, other_ca
):
    """alice's certificate passes her own check (her ca.pem holds the CA that signed it) but
    nimbus trusts only its own CA: what she hears names nimbus's refusal, not a missing
    leader."""
    bundle = tmp_path / "bundle.pem"
    bundle.write_bytes(
        (other_ca / "ca.pem").read_bytes() + (cluster.credentials_dir / "ca.pem").read_bytes()
    )
    conf_file = _user(cluster, tmp_path, "unforeseen", bundle)
    client_certificate(other_ca, tmp_path / "unforeseen", "alice")
    address = f"127.0.0.1:{cluster.nimbus_port}"
    _refused_by_client(squall_list(conf_file), f"TLS refused by nimbus at {address}")


def test_a_supervisor_nimbus_refuses_takes_no_slots_and_says_why(cluster, tmp_path, other_ca):
    """A supervisor whose certificate another CA signed (its own ca.pem trusts both, so its
    check passes) registered, took slots and stalled its topologies silently. Now it stays
    out of service and logs why each interval."""
    from squall.zk.server import free_port

    security = foreign_supervisor_security(
        cluster.credentials_dir, other_ca, tmp_path / "supervisor-security"
    )
    extra = {"security.dir": str(security), "supervisor.slots.ports": [free_port()]}
    extra["supervisor.heartbeat.frequency.secs"] = 1
    cluster._spawn("untrusted-supervisor", "supervisor", extra)
    log = cluster.directory / "untrusted-supervisor.log"
    said = "nimbus will not accept this supervisor's certificate: TLS refused by nimbus at"

    def times_said() -> int:
        return log.read_text(errors="replace").count(said)

    wait_for(lambda: times_said() >= 2, 60, f"the supervisor to say why twice:\n{log}")
    zk = cluster.zk_client("nimbus")
    try:
        assert zk.get_children("/squall/supervisors") == []  # no slots taken
    finally:
        zk.stop()
        zk.close()
    assert cluster.processes["untrusted-supervisor"].poll() is None  # it waits, it does not die
    cluster.stop_process("untrusted-supervisor")
