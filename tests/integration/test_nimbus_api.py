"""The Thrift API over TCP: typed errors for bad input, and a server that survives hostile
clients."""

import contextlib
import json
import socket
import struct

import pytest
from thriftpy2.thrift import TApplicationException

from squall import thrift_api as T
from squall.client import upload
from squall.local import wait_for
from squall.security.tls import client_context
from squall.submit import submit_file
from squall.topology import load_topology_file

from .conftest import TOPOLOGIES, squall

TINY = TOPOLOGIES / "tiny.py"


def test_unknown_topology_is_not_alive(cluster):
    with cluster.client() as client:
        for call in (
            lambda: client.killTopology("nope"),
            lambda: client.activate("nope"),
            lambda: client.deactivate("nope"),
            lambda: client.rebalance("nope", T.RebalanceOptions()),
            lambda: client.getTopologyInfo("nope"),
            lambda: client.getTopologyConf("nope"),
        ):
            with pytest.raises(T.NotAliveException, match="nope"):
                call()


def test_duplicate_name_is_already_alive_and_status_changes(cluster):
    conf = cluster.client_conf()
    with cluster.client() as client:
        submit_file(client, TINY, conf, name="dup", inactive=True)
        assert not client.isTopologyNameAllowed("dup")
        with pytest.raises(T.AlreadyAliveException, match="dup"):
            submit_file(client, TINY, conf, name="dup")

        def status():
            return {t.name: t.status for t in client.getClusterInfo().topologies}["dup"]

        assert status() == "INACTIVE"
        client.activate("dup")
        assert status() == "ACTIVE"
        client.deactivate("dup")
        assert status() == "INACTIVE"
        assert json.loads(client.getTopologyConf("dup"))["topology.workers"] == 2
        topology = client.getTopology("dup")
        assert set(topology.spouts) == {"numbers"} and set(topology.bolts) == {"sink"}
        client.killTopologyWithOpts("dup", T.KillOptions(wait_secs=30))
        assert status() == "KILLED"
        # Storm declares no IllegalStateException on activate: an error with its message
        with pytest.raises(TApplicationException, match="IllegalStateException: .*killed"):
            client.activate("dup")
        with pytest.raises(T.AlreadyAliveException):  # still alive until removed
            submit_file(client, TINY, conf, name="dup")
        client.killTopologyWithOpts("dup", T.KillOptions(wait_secs=0))
        wait_for(lambda: client.isTopologyNameAllowed("dup"), 30, "dup to be removed")


def test_invalid_topology_over_the_wire(cluster):
    topology = load_topology_file(TINY).to_thrift()
    topology.bolts["sink"].common.inputs = {
        T.GlobalStreamId(componentId="missing", streamId="default"): T.Grouping(
            shuffle=T.NullStruct()
        )
    }
    with cluster.client() as client:
        location = upload(client, b"not used")
        with pytest.raises(T.InvalidTopologyException, match="'sink'.*'missing'"):
            client.submitTopology("bad", location, "{}", topology)
        with pytest.raises(T.InvalidTopologyException, match="name"):
            client.submitTopology("../etc", location, "{}", topology)
        good = load_topology_file(TINY).to_thrift()
        # an unknown key is accepted (Storm's rule); a wrong type for a known one is not
        with pytest.raises(T.InvalidTopologyException, match="topology.workers must be an"):
            client.submitTopology("bad", location, '{"topology.workers": "two"}', good)
        assert client.isTopologyNameAllowed("bad")  # nothing was left behind


def test_uploads_and_downloads_refuse_bad_locations(cluster):
    with cluster.client() as client:
        with pytest.raises(TApplicationException, match="InvalidTopologyException"):
            client.uploadChunk("../../etc/passwd", b"x")
        with pytest.raises(T.InvalidTopologyException, match="not finished"):
            location = client.beginFileUpload()
            client.submitTopology("x", location, "{}", load_topology_file(TINY).to_thrift())
        with pytest.raises(TApplicationException, match="NotAliveException"):
            client.beginFileDownload("../../../etc/passwd")
        with pytest.raises(TApplicationException, match="NotAliveException"):
            client.downloadChunk("no-such-download")


def connect(cluster, tls: bool) -> socket.socket:
    """A raw connection to nimbus: inside an authenticated TLS session (admin's
    certificate: the bytes reach the Thrift layer) or plain (they meet the TLS handshake)."""
    sock = socket.create_connection(("127.0.0.1", cluster.nimbus_port), timeout=10)
    if not tls:
        return sock
    return client_context(cluster.client_conf()).wrap_socket(sock, server_hostname="127.0.0.1")


@pytest.mark.parametrize("tls", [True, False], ids=["in-tls", "at-handshake"])
def test_hostile_bytes_close_only_their_connection(cluster, tls):
    payloads = [
        b"GET / HTTP/1.1\r\nHost: x\r\n\r\n",  # not Thrift at all
        struct.pack("!i", 2**31 - 1) + b"x",  # a 2 GiB frame
        struct.pack("!i", -5),  # a negative frame length
        struct.pack("!i", 12) + b"\x80\x01\x00\x01" + b"\xff" * 8,  # a frame of garbage
        struct.pack("!i", 100) + b"half a frame",  # then hang up
        bytes(range(256)) * 8,
    ]
    for payload in payloads:
        # nimbus may close the connection before we finish: that is the point
        with contextlib.suppress(OSError), connect(cluster, tls) as s:
            s.sendall(payload)
            if not tls:
                s.shutdown(socket.SHUT_WR)  # a TLS socket cannot half-close
            s.recv(1024)
    with cluster.client() as client:
        assert len(client.getClusterInfo().supervisors) == 2


def test_unknown_method_gets_an_exception_reply(cluster):
    """A client built from another IDL calls a method nimbus lacks: it gets a Thrift
    EXCEPTION message back (type 3) and nimbus keeps serving."""
    name = b"noSuchMethod"
    message = struct.pack("!I", 0x80010001) + struct.pack("!i", len(name)) + name
    message += struct.pack("!i", 7) + b"\x00"  # seqid, empty args struct
    with connect(cluster, tls=True) as s:
        s.sendall(struct.pack("!i", len(message)) + message)
        reply = s.recv(4096)
    (version,) = struct.unpack("!I", reply[4:8])
    assert version & 0xFF == 3  # TMessageType.EXCEPTION
    assert name in reply
    with cluster.client() as client:
        assert client.getLeader().isLeader


def test_a_second_supervisor_on_the_same_dir_or_id_is_a_clear_error(cluster, tmp_path):
    """The same conf again (the same storm.local.dir) stops before it kills anything as a
    stray; the same supervisor.id from another dir stops when ZooKeeper says it is taken."""
    import subprocess
    import sys

    import yaml

    def second_supervisor(conf_file):
        return subprocess.run(
            [sys.executable, "-m", "squall.cli", "--config", str(conf_file), "supervisor"],
            capture_output=True,
            text=True,
            timeout=60,
        )

    conf_file = cluster.directory / "supervisor1.yaml"
    result = second_supervisor(conf_file)
    assert result.returncode == 1
    assert "another supervisor is running on" in result.stderr, result.stderr
    assert "Traceback" not in result.stderr

    conf = yaml.safe_load(conf_file.read_text())
    elsewhere = tmp_path / "elsewhere.yaml"
    local = {"storm.local.dir": str(tmp_path / "local"), "supervisor.spark.connect.enable": False}
    elsewhere.write_text(yaml.safe_dump({**conf, **local}))
    result = second_supervisor(elsewhere)
    assert result.returncode == 1
    assert "already registered" in result.stderr, result.stderr
    with cluster.client() as client:
        assert len(client.getClusterInfo().supervisors) == 2  # the first ones are there


def test_cli_manages_a_topology(cluster):
    result = squall(cluster, "submit", str(TINY), "--name", "clitest", "--inactive")
    assert result.returncode == 0, result.stderr
    assert "submitted topology clitest" in result.stdout
    listing = squall(cluster, "list").stdout
    assert "clitest" in listing and "INACTIVE" in listing and "supervisor1" in listing
    assert squall(cluster, "activate", "clitest").returncode == 0
    assert "ACTIVE" in squall(cluster, "list").stdout
    assert squall(cluster, "deactivate", "clitest").returncode == 0
    assert squall(cluster, "kill", "clitest", "-w", "0").returncode == 0
    with cluster.client() as client:
        wait_for(lambda: client.isTopologyNameAllowed("clitest"), 60, "clitest removed")
    missing = squall(cluster, "kill", "clitest")
    assert missing.returncode == 1
    assert "NotAliveException" in missing.stderr and "clitest" in missing.stderr
    bad = squall(cluster, "submit", str(TINY), "--name", "a/b")
    assert bad.returncode == 1 and "InvalidTopologyException" in bad.stderr


def test_a_clean_stop_of_the_leader_is_not_a_step_down(cluster):
    """SIGTERM ends the leader with status 0; closing its own ZooKeeper session on the way
    out is no reason to step down (which exits 3 for a process manager to restart it)."""
    process = cluster.processes["nimbus"]
    cluster.restart_nimbus(1)  # terminate (SIGTERM), then start again and wait until ready
    assert process.returncode == 0
    assert "stepping down" not in (cluster.directory / "nimbus.log").read_text()
