"""Nimbus's Thrift server over TLS with client certificates from a throwaway CA: a handshake
that never completes is cut, a client without a certificate is refused, and an upload
belongs to the identity (certificate CN) that began it.

The server, the handler's upload methods and the inbox are nimbus's own, over real TLS and
TCP; the controller is replaced by the few members those methods use (its leadership and
its submit decision are tested elsewhere), because the local cluster cannot be given
certificates yet."""

from __future__ import annotations

import socket
import ssl
import threading
import time
from pathlib import Path
from types import SimpleNamespace

import pytest
from thriftpy2.protocol.binary import TBinaryProtocolFactory
from thriftpy2.rpc import make_client
from thriftpy2.transport import TTransportException
from thriftpy2.transport.framed import TFramedTransportFactory

from squall import thrift_api as T
from squall.config import cluster_conf
from squall.nimbus.handler import NimbusHandler
from squall.nimbus.inbox import Inbox
from squall.nimbus.server import NimbusServer
from squall.nimbus.upload_policy import UploadQuota
from squall.topology import load_topology_file

from .test_thrift_limits import closed_by_peer
from .throwaway_pki import make_pki

TINY = load_topology_file(Path(__file__).parent / "topologies" / "endless.py")
HANDSHAKE_SECS = 2


@pytest.fixture(scope="module")
def pki(tmp_path_factory):
    return make_pki(tmp_path_factory.mktemp("pki"), clients=("alice", "bob"))


@pytest.fixture(scope="module")
def nimbus(tmp_path_factory, pki):
    """A TLS nimbus server on a free loopback port; stopped and joined afterwards."""
    directory = tmp_path_factory.mktemp("nimbus")
    conf = cluster_conf(
        **{
            "storm.local.dir": str(directory),
            "nimbus.thrift.port": 0,
            "nimbus.thrift.handshake.timeout.secs": HANDSHAKE_SECS,
        }
    )
    inbox = Inbox(directory / "inbox", UploadQuota.from_conf(conf))
    submitted: list[str] = []

    def submit(name, location, json_conf, topology, status):
        inbox.take(location)  # what an accepted submit does with its upload
        submitted.append(location)

    controller = SimpleNamespace(
        inbox=inbox,
        clock=time.monotonic,
        begin_upload=lambda owner=None: inbox.begin(time.monotonic(), owner),
        submit=submit,
    )
    server = NimbusServer(T.Nimbus, conf, pki.server_context())
    port = server.listen()
    handler = NimbusHandler(controller, conf, "127.0.0.1", port, leader_of=lambda: None)
    thread = threading.Thread(target=server.serve_forever, args=(handler,), daemon=True)
    thread.start()
    try:
        yield SimpleNamespace(port=port, inbox=inbox, submitted=submitted)
    finally:
        server.close()
        thread.join(10)
        assert not thread.is_alive()


def client_of(nimbus, pki, name):
    return make_client(
        T.Nimbus,
        "127.0.0.1",
        nimbus.port,
        proto_factory=TBinaryProtocolFactory(),
        trans_factory=TFramedTransportFactory(),
        timeout=10_000,
        ssl_context=pki.client_context(name),
    )


def test_a_handshake_that_never_completes_is_cut(nimbus):
    with socket.create_connection(("127.0.0.1", nimbus.port), timeout=5) as s:
        started = time.monotonic()
        assert closed_by_peer(s, HANDSHAKE_SECS + 5)
        assert time.monotonic() - started >= HANDSHAKE_SECS - 0.5


def test_a_client_without_a_certificate_is_refused(nimbus, pki):
    # TLS 1.3: the client's handshake ends before the server checks its certificate, so
    # the refusal shows at the first read as a connection nimbus closed (or an SSL alert)
    with pytest.raises((TTransportException, ssl.SSLError, ConnectionError)):
        client = client_of(nimbus, pki, None)
        client.getNimbusConf()


def test_another_identity_cannot_use_your_upload(nimbus, pki):
    alice, bob = client_of(nimbus, pki, "alice"), client_of(nimbus, pki, "bob")
    try:
        location = alice.beginFileUpload()
        alice.uploadChunk(location, b"alice's code")
        assert nimbus.inbox.uploads[location].owner == "alice"
        with pytest.raises(T.AuthorizationException, match="another identity"):
            bob.uploadChunk(location, b"bob's code")
        with pytest.raises(T.AuthorizationException, match="another identity"):
            bob.finishFileUpload(location)
        alice.finishFileUpload(location)
        with pytest.raises(T.AuthorizationException, match="another identity"):
            bob.submitTopology("stolen", location, "{}", TINY.to_thrift())
        assert nimbus.submitted == []
        upload = nimbus.inbox.uploads[location]
        assert upload.path.read_bytes() == b"alice's code" and upload.finished
        alice.submitTopology("mine", location, "{}", TINY.to_thrift())
        assert nimbus.submitted == [location]
        assert bob.beginFileUpload() != location  # bob still uploads his own
    finally:
        alice.close()
        bob.close()


def test_finished_but_unsubmitted_uploads_expire(nimbus, pki):
    alice = client_of(nimbus, pki, "alice")
    try:
        idle = alice.beginFileUpload()
        finished = alice.beginFileUpload()
        alice.uploadChunk(finished, b"code")
        alice.finishFileUpload(finished)
    finally:
        alice.close()
    paths = [nimbus.inbox.uploads[loc].path for loc in (idle, finished)]
    assert nimbus.inbox.expire(time.monotonic(), max_age=3600) == []
    expired = nimbus.inbox.expire(time.monotonic() + 3601, max_age=3600)
    assert {idle, finished} <= set(expired)
    assert not any(path.exists() for path in paths)
