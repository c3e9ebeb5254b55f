"""Nimbus's Thrift server over real TCP (no ZooKeeper, a stand-in handler): a call queued
behind busy handler threads still waits on its client's behalf, so its connection may be
closed to make room, and the call is then dropped, never run; a running call never is."""

from __future__ import annotations

import socket
import struct
import threading

import pytest
from thriftpy2.protocol.binary import TBinaryProtocol
from thriftpy2.thrift import TMessageType

from squall import thrift_api as T
from squall.config import load_defaults
from squall.local import wait_for
from squall.nimbus.rpc.server import NimbusServer
from squall.nimbus.rpc.thrift_call import ReplyWriter


class Handler:
    """isTopologyNameAllowed blocks its first caller until `release`."""

    def __init__(self) -> None:
        self.entered, self.release = threading.Event(), threading.Event()
        self.calls: list[str] = []

    def isTopologyNameAllowed(self, name: str) -> bool:
        self.calls.append(name)
        if len(self.calls) == 1:
            self.entered.set()
            self.release.wait(30)
        return True


@pytest.fixture
def server():
    conf = {
        **load_defaults(),
        "nimbus.host": "127.0.0.1",
        "nimbus.thrift.port": 0,
        "nimbus.thrift.threads": 1,
        "nimbus.thrift.max.connections": 2,
        "nimbus.thrift.max.connections.per.address": 2,
    }
    handler = Handler()
    nimbus = NimbusServer(T.Nimbus, conf)
    port = nimbus.listen()
    thread = threading.Thread(target=nimbus.serve_forever, args=(handler,), daemon=True)
    thread.start()
    try:
        yield nimbus, handler, port
    finally:
        handler.release.set()
        nimbus.close()
        thread.join(10)


def ask(port: int, name: str) -> socket.socket:
    """A connection that sent isTopologyNameAllowed(name)."""
    out = ReplyWriter()
    proto = TBinaryProtocol(out)
    proto.write_message_begin("isTopologyNameAllowed", TMessageType.CALL, 1)
    T.Nimbus.isTopologyNameAllowed_args(name=name).write(proto)
    frame = bytes(out.data)
    sock = socket.create_connection(("127.0.0.1", port), timeout=10)
    sock.sendall(struct.pack("!i", len(frame)) + frame)
    return sock


def answered(sock: socket.socket) -> bool:
    """Whether a reply frame comes back (False: the server closed the connection)."""
    head = sock.recv(4)
    return len(head) == 4 and len(sock.recv(65536)) > 0


def test_a_queued_call_makes_room_and_is_never_run_a_running_one_is_kept(server):
    nimbus, handler, port = server
    with ask(port, "running") as running:
        wait_for(handler.entered.is_set, 10, "the first call to run")
        with ask(port, "queued") as queued:
            wait_for(lambda: nimbus.pool.jobs.qsize() == 1, 10, "the second call to queue")
            with ask(port, "newcomer") as newcomer:  # two open: one must make room
                assert not answered(queued)  # closed: it only waited for a thread
                handler.release.set()
                assert answered(running) and answered(newcomer)
    assert handler.calls == ["running", "newcomer"]  # the dropped call never ran
