"""squall.zk.server.free_port: ports free now, never handed out twice by one process, and
drawn from a range of their own when SQUALL_FREE_PORTS names one (each pytest process of
`make test` has its own: tests/conftest.py)."""

from __future__ import annotations

import socket

import pytest

from squall.zk import server as zkserver
from squall.zk.server import PORT_RANGE_ENV, free_port, port_range

UNUSED = (19990, 19992)  # below the suite's ranges (tests/conftest.py) and the kernel's


@pytest.fixture(autouse=True)
def nothing_handed_out(monkeypatch):
    monkeypatch.setattr(zkserver, "_handed_out", set())


def test_ports_come_from_the_named_range_and_never_twice(monkeypatch):
    monkeypatch.setenv(PORT_RANGE_ENV, f"{UNUSED[0]}-{UNUSED[1]}")
    ports = {free_port() for _ in range(3)}
    assert ports == set(range(UNUSED[0], UNUSED[1] + 1))
    with pytest.raises(RuntimeError, match="no port free"):
        free_port()  # all three handed out already


def test_a_port_in_use_is_not_handed_out(monkeypatch):
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        port = taken.getsockname()[1]
        monkeypatch.setenv(PORT_RANGE_ENV, f"{port}-{port}")
        with pytest.raises(RuntimeError):
            free_port()


def test_an_ensembles_port_is_free_on_every_address(monkeypatch):
    monkeypatch.setenv(PORT_RANGE_ENV, f"{UNUSED[0]}-{UNUSED[0] + 1}")
    with socket.socket() as taken:  # the first port is taken on the second address only
        taken.bind(("127.0.0.2", UNUSED[0]))
        assert free_port("127.0.0.1", "127.0.0.2") == UNUSED[0] + 1


def test_without_a_range_the_kernel_picks_distinct_bindable_ports(monkeypatch):
    monkeypatch.delenv(PORT_RANGE_ENV, raising=False)
    ports = [free_port() for _ in range(20)]
    assert len(set(ports)) == 20
    with socket.socket() as s:
        s.bind(("127.0.0.1", ports[-1]))


def test_port_range_reads_low_high_and_refuses_the_rest():
    assert port_range("") is None
    assert port_range("20000-20999") == (20000, 20999)
    for bad in ("20000", "a-b", "30000-20000", "80-90", "20000-70000", "-5-10", "²-3"):
        with pytest.raises(ValueError, match=PORT_RANGE_ENV):
            port_range(bad)
