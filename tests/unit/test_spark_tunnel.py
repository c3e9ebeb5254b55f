"""The Spark tunnel's two ends on loopback, with an echo server standing in for the Spark
Connect server: bytes get through for an admitted identity, and every way of not getting
through (identity not allowed, another CA's certificate either way, nothing listening, not
TLS, a server not ready) is refused at once with the reason in words."""

import shutil
import socket
import ssl
import threading

import pytest

from squall import spark_tunnel as st
from squall.config import cluster_conf
from squall.security.certificates import CertificateFilesError, ensure_credentials, issue_server
from squall.spark_tunnel_listener import TunnelListener
from squall.worker.spark_forwarder import Forwarder

TOKEN = "the-servers-token"


def make_conf(directory):
    conf = cluster_conf(**{"storm.local.dir": str(directory)})
    ensure_credentials(conf)
    issue_server(conf, st.IDENTITY, ["localhost", "127.0.0.1"])
    return conf


@pytest.fixture
def conf(tmp_path):
    return make_conf(tmp_path / "cluster")


@pytest.fixture
def echo():
    """A loopback server that sends back what it gets (the Connect server's stand-in)."""
    server = socket.create_server(("127.0.0.1", 0))
    threads = []

    def serve() -> None:
        while True:
            try:
                conn, _ = server.accept()
            except OSError:
                return
            threads.append(threading.Thread(target=copy, args=(conn,), daemon=True))
            threads[-1].start()

    def copy(conn: socket.socket) -> None:
        with conn:
            while data := conn.recv(4096):
                conn.sendall(data)

    accepting = threading.Thread(target=serve, daemon=True)
    accepting.start()
    yield server.getsockname()[1]
    server.shutdown(socket.SHUT_RDWR)
    server.close()
    for thread in [accepting, *threads]:
        thread.join(10)  # each ends once the tunnel in front of it closed its connection


def start_listener(conf, upstream, allowed=("supervisor",)):
    listener = TunnelListener(st.listener_context(conf), "127.0.0.1", 0, allowed, upstream)
    thread = threading.Thread(target=listener.run, daemon=True)
    thread.start()
    return listener, thread


@pytest.fixture
def listener(conf, echo):
    listener, thread = start_listener(conf, lambda: (echo, TOKEN))
    yield listener
    listener.close()
    thread.join(10)


def forwarder(conf, port, identity="supervisor", context=None):
    return Forwarder(context or st.dialer_context(conf, identity), ("127.0.0.1", port), 5.0)


def test_bytes_go_through_for_an_admitted_identity_which_learns_the_token(conf, listener):
    fwd = forwarder(conf, listener.address[1])
    try:
        port = fwd.open()
        assert fwd.token == TOKEN
        for _ in range(2):  # each local connection is a tunnel of its own
            with socket.create_connection(("127.0.0.1", port), 5) as local:
                local.sendall(b"hello spark")
                local.settimeout(5)
                assert local.recv(100) == b"hello spark"
    finally:
        fwd.close()


def refusal(conf, port, **kwargs) -> str:
    with pytest.raises(st.SparkUnreachable) as caught:
        forwarder(conf, port, **kwargs).open()
    text = str(caught.value)
    assert text.startswith(f"cannot reach the Spark Connect server at 127.0.0.1:{port}")
    return text


def test_an_identity_not_allowed_is_told_so(conf, listener):
    text = refusal(conf, listener.address[1], identity="admin")
    assert "identity 'admin' is not allowed here (allowed: supervisor)" in text


def test_a_certificate_of_another_ca_is_refused_by_the_listener(conf, listener, tmp_path):
    other = make_conf(tmp_path / "other")
    context = ssl.create_default_context(cafile=str(tmp_path / "cluster/credentials/ca.pem"))
    credentials = tmp_path / "other/credentials"
    context.load_cert_chain(credentials / "supervisor.pem", credentials / "supervisor.key")
    text = refusal(other, listener.address[1], context=context)
    assert "it refused this host's certificate" in text or "did not accept" in text


def test_a_listener_of_another_ca_is_not_trusted(conf, listener, tmp_path):
    text = refusal(make_conf(tmp_path / "other"), listener.address[1])
    assert "its certificate was not accepted" in text and "this cluster's CA" in text


def test_nothing_listening_is_a_refused_connection(conf):
    with socket.create_server(("127.0.0.1", 0)) as s:
        port = s.getsockname()[1]
    assert "connection refused" in refusal(conf, port)


def test_a_server_that_does_not_speak_tls(conf):
    with socket.create_server(("127.0.0.1", 0)) as plain:

        def answer() -> None:
            conn, _ = plain.accept()
            with conn:
                conn.recv(4096)
                conn.sendall(b"HTTP/1.1 400 Bad Request\r\n\r\n")

        threading.Thread(target=answer, daemon=True).start()
        assert "it does not speak TLS" in refusal(conf, plain.getsockname()[1])


def test_a_server_not_ready_behind_the_listener(conf):
    listener, thread = start_listener(conf, lambda: None)
    try:
        text = refusal(conf, listener.address[1])
        assert "the Spark Connect server behind it is not ready" in text
    finally:
        listener.close()
        thread.join(10)


def test_missing_credentials_name_the_files(conf, tmp_path):
    shutil.rmtree(tmp_path / "cluster/credentials")
    with pytest.raises(CertificateFilesError, match="spark-connect.pem"):
        st.listener_context(conf)


@pytest.mark.parametrize(
    ("text", "expected"),
    [("h:15003", ("h", 15003)), ("[::1]:1", ("::1", 1)), ("10.0.0.5:80", ("10.0.0.5", 80))],
)
def test_split_address(text, expected):
    assert st.split_address(text) == expected


@pytest.mark.parametrize("text", ["h", "h:", ":80", "h:0", "h:x", "h:70000"])
def test_split_address_refuses_what_is_not_host_port(text):
    with pytest.raises(ValueError, match="is not host:port"):
        st.split_address(text)


def test_greetings_round_trip_and_refusals_say_why():
    assert st.read_greeting(st.greeting("abc")) == "abc"
    with pytest.raises(st.SparkUnreachable, match="it refused this connection: no way"):
        st.read_greeting(st.refusal("no\nway"))
    with pytest.raises(st.SparkUnreachable, match="not `squall spark connect-server`"):
        st.read_greeting(b"SSH-2.0-OpenSSH\n")


def test_a_server_that_never_answers_the_handshake(conf):
    with socket.create_server(("127.0.0.1", 0)) as silent:  # listens, never accepts
        fwd = Forwarder(st.dialer_context(conf, "supervisor"), silent.getsockname()[:2], 1.0)
        with pytest.raises(st.SparkUnreachable, match="no answer within 1s"):
            fwd.open()
