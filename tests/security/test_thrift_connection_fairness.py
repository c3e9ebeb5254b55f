"""Nimbus's Thrift server against strangers on the admin's own host (issue 36 item 6), over
real TCP on loopback: unauthenticated connections never push out an authenticated one,
calls missing their arguments get a typed error (no traceback in nimbus's log), and a flood
of unknown-method calls is one log line per interval, not one per call. (Memory after
connection churn: bench/thrift_churn.py, figures in bench/RESULTS.md.)"""

from __future__ import annotations

import socket
import struct

import pytest
from thriftpy2.thrift import TApplicationException, TMessageType

from squall.local import LocalCluster
from squall.security.tls import client_context

PER_ADDRESS = 16
CONF = {
    "nimbus.thrift.max.connections": 32,
    "nimbus.thrift.max.connections.per.address": PER_ADDRESS,
}


@pytest.fixture(scope="module")
def cluster(tmp_path_factory):
    with LocalCluster(tmp_path_factory.mktemp("fair"), supervisors=0, conf=CONF) as c:
        yield c


def strangers(port: int, count: int) -> list[socket.socket]:
    """Connections that never start TLS: each waits in nimbus's first-byte peek."""
    return [socket.create_connection(("127.0.0.1", port), timeout=10) for _ in range(count)]


def test_strangers_on_the_admins_address_never_evict_the_admin(cluster):
    """300 idle strangers from 127.0.0.1 (the admin's address too), far past the per-address
    cap, while the admin's open connection keeps calling and the admin opens new ones."""
    held: list[socket.socket] = []
    try:
        with cluster.client() as admin:
            assert admin.getClusterInfo().nimbuses  # authenticated now
            for _ in range(3):
                held += strangers(cluster.nimbus_port, 100)
                for _ in range(10):  # the same connection: never cut for them
                    assert admin.getClusterInfo().nimbuses
                with cluster.client() as fresh:  # a newcomer pushes a stranger out
                    assert fresh.getLeader().port == cluster.nimbus_port
    finally:
        for s in held:
            s.close()


# calls whose handler fails without the argument left out (the others refuse it, typed)
MISSING = [("beginFileDownload", (None,)), ("setTopologyConf", (None, None))]


def test_missing_arguments_are_a_typed_error_without_a_traceback(cluster):
    with cluster.client() as admin:
        for api, args in MISSING:
            with pytest.raises(TApplicationException) as refused:
                getattr(admin, api)(*args)
            assert refused.value.type == TApplicationException.PROTOCOL_ERROR
            assert refused.value.message.startswith(f"{api}: missing argument(s) ")
        assert admin.getClusterInfo().nimbuses  # the connection still serves
    log = (cluster.directory / "nimbus.log").read_text(errors="replace")
    assert "missing argument(s)" in log and "Traceback" not in log


def unknown_call(seqid: int) -> bytes:
    name = b"noSuchMethod"
    body = struct.pack("!I", 0x80010000 | TMessageType.CALL) + struct.pack("!i", len(name))
    body += name + struct.pack("!i", seqid) + b"\x00"  # no arguments (STOP)
    return struct.pack("!i", len(body)) + body


def read_frame(sock) -> bytes:
    def exactly(n: int) -> bytes:
        data = b""
        while len(data) < n:
            chunk = sock.recv(n - len(data))
            assert chunk, "nimbus closed the connection"
            data += chunk
        return data

    return exactly(struct.unpack("!i", exactly(4))[0])


def test_unknown_method_calls_are_logged_once_per_interval(cluster):
    context = client_context(cluster.client_conf(), "admin")
    raw = socket.create_connection(("127.0.0.1", cluster.nimbus_port), timeout=30)
    with context.wrap_socket(raw, server_hostname="127.0.0.1") as sock:
        for seqid in range(2000):  # each answered, the connection kept (as Thrift does)
            sock.sendall(unknown_call(seqid))
            assert b"noSuchMethod" in read_frame(sock)
    log = (cluster.directory / "nimbus.log").read_text(errors="replace")
    lines = [line for line in log.splitlines() if "a call of an unknown method" in line]
    assert len(lines) == 1 and "noSuchMethod" in lines[0]
