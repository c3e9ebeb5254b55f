"""Where a worker listens: its supervisor's address only, for ZeroMQ and for Spark."""

import socket

import pytest
import zmq

from squall.config import ConfigError, load_defaults, validate
from squall.worker.bind_address import BindError, bind_address, endpoint, loopback_surprise
from squall.worker.spark import session_settings

V4 = (socket.AF_INET, socket.SOCK_STREAM, 6, "", ("10.1.2.3", 0))
V4_OTHER = (socket.AF_INET, socket.SOCK_STREAM, 6, "", ("10.9.9.9", 0))
V6 = (socket.AF_INET6, socket.SOCK_STREAM, 6, "", ("fd00::7", 0, 0, 0))


def resolver(*infos):
    asked = []

    def resolve(host, port, family, kind):
        asked.append((host, port, family, kind))
        return list(infos)

    resolve.asked = asked
    return resolve


def test_bind_address_prefers_the_first_ipv4_address():
    resolve = resolver(V6, V4, V4_OTHER)
    assert bind_address("node1", resolve) == "10.1.2.3"
    assert resolve.asked == [("node1", None, 0, socket.SOCK_STREAM)]


def test_bind_address_falls_back_to_ipv6():
    assert bind_address("node1", resolver(V6)) == "fd00::7"


def test_bind_address_of_a_literal_and_of_localhost():
    assert bind_address("127.0.0.1") == "127.0.0.1"
    assert bind_address("localhost") in ("127.0.0.1", "::1")


@pytest.mark.parametrize("host", ["", "no-such-host.invalid"])
def test_no_host_or_an_unknown_one_is_a_bind_error(host):
    with pytest.raises(BindError, match="host"):
        bind_address(host)


def test_a_host_without_ip_addresses_is_a_bind_error():
    with pytest.raises(BindError, match="no IPv4 or IPv6"):
        bind_address("node1", resolver())


def test_a_host_name_resolving_to_loopback_is_a_surprise_a_literal_is_not():
    assert loopback_surprise("node1", "127.0.1.1")
    assert loopback_surprise("node1", "::1")
    assert not loopback_surprise("node1", "10.1.2.3")
    assert not loopback_surprise("localhost", "127.0.0.1")
    assert not loopback_surprise("127.0.0.1", "127.0.0.1")
    assert not loopback_surprise("::1", "::1")


def test_endpoints_bracket_ipv6_addresses():
    assert endpoint("10.1.2.3", 6700) == "tcp://10.1.2.3:6700"
    assert endpoint("fd00::7", 6700) == "tcp://[fd00::7]:6700"


def test_spark_driver_is_bound_to_the_worker_unless_the_conf_says_otherwise():
    conf = {
        "spark.master": "local[2]",
        "spark.sql.shuffle.partitions": 2,
        "other": "x",
        "security": False,
    }
    assert session_settings(conf, "node1", "10.1.2.3") == {
        "spark.ui.enabled": "false",
        "spark.ui.showConsoleProgress": "false",
        "spark.driver.host": "node1",
        "spark.driver.bindAddress": "10.1.2.3",
        "spark.sql.shuffle.partitions": "2",
    }
    own = {**conf, "spark.driver.host": "gw", "spark.driver.bindAddress": "0.0.0.0"}
    settings = session_settings(own, "node1", "10.1.2.3")
    assert settings["spark.driver.host"] == "gw"
    assert settings["spark.driver.bindAddress"] == "0.0.0.0"  # open mode: the conf decides


def test_with_security_on_a_topology_conf_cannot_open_the_driver():
    conf = {
        "spark.master": "local[2]",
        "spark.driver.host": "gw",
        "spark.driver.bindAddress": "0.0.0.0",
        "spark.ui.enabled": "true",
        "spark.authenticate": "false",
    }
    settings = session_settings(conf, "node1", "10.1.2.3")
    assert settings["spark.driver.bindAddress"] == "10.1.2.3"
    assert settings["spark.ui.enabled"] == "false"
    assert settings["spark.authenticate"] == "true"
    assert settings["spark.driver.host"] == "gw"  # the name it advertises opens nothing


def test_a_secure_local_driver_authenticates_its_rpc():
    conf = {"spark.master": "local[2]"}  # security is on by default
    assert session_settings(conf, "node1", "10.1.2.3")["spark.authenticate"] == "true"
    open_mode = session_settings({**conf, "security": False}, "node1", "10.1.2.3")
    assert "spark.authenticate" not in open_mode


def test_spark_connect_gets_no_driver_settings():
    conf = {"spark.remote": "sc://spark:15002", "spark.sql.shuffle.partitions": 4}
    assert session_settings(conf, "node1", "10.1.2.3") == {"spark.sql.shuffle.partitions": "4"}


def test_max_message_bytes_is_a_positive_integer():
    defaults = load_defaults()
    assert defaults["worker.max.message.bytes"] == 64 * 2**20
    assert validate({"worker.max.message.bytes": 1}, defaults, "t") == {
        "worker.max.message.bytes": 1
    }
    for bad in (0, -1, "64MB", 1.5):
        with pytest.raises(ConfigError, match="worker.max.message.bytes"):
            validate({"worker.max.message.bytes": bad}, defaults, "t")


def test_an_oversized_frame_disconnects_only_its_sender():
    """ZeroMQ's MAXMSGSIZE, as the transport sets it: the big frame is never delivered, the
    socket keeps serving another peer, and the sender that was cut off can send again."""
    ctx = zmq.Context()
    pull = ctx.socket(zmq.PULL)
    pull.setsockopt(zmq.MAXMSGSIZE, 1000)
    port = pull.bind_to_random_port("tcp://127.0.0.1")
    bad, good = ctx.socket(zmq.PUSH), ctx.socket(zmq.PUSH)
    try:
        for s in (bad, good):
            s.setsockopt(zmq.LINGER, 0)
            s.connect(f"tcp://127.0.0.1:{port}")
        cut_off = bad.get_monitor_socket(zmq.EVENT_DISCONNECTED)
        bad.send(b"x" * 5000)
        good.send(b"ok")
        assert pull.poll(5000) and pull.recv() == b"ok"
        # what `bad` sent before the receiver cut it off is lost with the connection: send
        # again only once it has been cut off (it goes out when `bad` has reconnected)
        assert cut_off.poll(5000), "the oversized frame did not disconnect its sender"
        bad.disable_monitor()
        cut_off.close(linger=0)
        bad.send(b"small after")
        assert pull.poll(5000) and pull.recv() == b"small after"
        good.send(b"ok again")
        assert pull.poll(5000) and pull.recv() == b"ok again"
        assert not pull.poll(200)  # the oversized frame never arrives
    finally:
        for s in (bad, good, pull):
            s.close(linger=0)
        ctx.term()
