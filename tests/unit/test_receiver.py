"""A worker's receive socket (worker/receiver.py) over real ZeroMQ: a start that cannot bind
fails with ZeroMQ's error at once and leaves nothing open, so the worker exits and its
supervisor restarts it (a context with a socket left open would hang the exit for good)."""

import socket
import threading

import pytest
import zmq

from squall.worker.receiver import Receiver
from squall.worker.transport import Transport, TransportSettings
from squall.zk.server import free_port
from tests.unit.receiving_doubles import receiving


def test_a_taken_port_fails_the_start_at_once_and_a_free_one_still_binds():
    taken = socket.socket()
    taken.bind(("127.0.0.1", 0))
    taken.listen()
    failures: list[BaseException] = []

    def start() -> None:
        try:
            Transport(
                TransportSettings("127.0.0.1", taken.getsockname()[1], 2**16),
                receiving(print, lambda *a: None),
            )
        except zmq.ZMQError as exc:
            failures.append(exc)

    try:
        thread = threading.Thread(target=start, daemon=True)
        thread.start()
        thread.join(10)
        assert not thread.is_alive(), "the failed start hangs"
        assert len(failures) == 1 and failures[0].errno == zmq.EADDRINUSE
    finally:
        taken.close()
    transport = Transport(
        TransportSettings("127.0.0.1", free_port(), 2**16),
        receiving(print, lambda *a: None),
    )
    transport.start()
    transport.close()


def test_a_socket_option_refused_before_the_bind_closes_what_was_opened(monkeypatch):
    refused = zmq.ZMQError(zmq.EINVAL)
    real = zmq.Socket.setsockopt

    def setsockopt(self, option, value):
        if option == zmq.MAXMSGSIZE:
            raise refused
        return real(self, option, value)

    monkeypatch.setattr(zmq.Socket, "setsockopt", setsockopt)
    ctx = zmq.Context()
    with pytest.raises(zmq.ZMQError):
        Receiver(ctx, "127.0.0.1", free_port(), 2**16, None)
    done = threading.Event()
    threading.Thread(target=lambda: (ctx.term(), done.set()), daemon=True).start()
    closed = done.wait(10)
    if not closed:
        ctx.destroy(linger=0)  # a failure must not hang the whole run too
    assert closed, "a socket of the failed receiver is still open"
