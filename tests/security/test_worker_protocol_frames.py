"""Protocol messages between two real Transports over CURVE: they arrive as the messages they
are (in order per type, beside the tuples), and a key holder's malformed protocol frame is
dropped by the receive thread, which goes on delivering what comes next. A flush splits into
the local part (delivered at once), the remote part (in order) and what has no address."""

import threading

import zmq

from squall.local import wait_for
from squall.security.topology_keys import new_keys
from squall.thrift_api import DEFAULT_STREAM
from squall.worker import curve
from squall.worker.acking import AckTree, FailTree, InitTree, TreeDone
from squall.worker.delivery import TupleDelivery
from squall.worker.protocol_frames import PROTOCOL_MAGIC
from squall.worker.transport import Transport, TransportSettings
from squall.zk.server import free_port
from tests.unit.receiving_doubles import receiving


def fields_of(component: str, stream: str) -> tuple[str, ...]:
    return ("n",)


class Received:
    def __init__(self) -> None:
        self.items: list = []
        self.lock = threading.Lock()

    def many(self, items, stopping=None) -> None:
        with self.lock:
            self.items.extend(items)


def test_protocol_messages_cross_as_themselves_and_junk_frames_are_dropped():
    keys = new_keys()
    received = Received()
    port = free_port()
    receiver = Transport(
        TransportSettings("127.0.0.1", port, 2**16, keys),
        # backpressure on: arrivals go through Parking
        receiving(received.many, fields_of, full=lambda task: False),
    )
    sender = Transport(
        TransportSettings("127.0.0.1", free_port(), 2**16, keys),
        receiving(lambda ds, stopping: None, fields_of),
    )
    receiver.start()
    sender.start()
    ctx = zmq.Context()
    try:
        sender.route({1: ("127.0.0.1", port), 2: ("127.0.0.1", port)}, set())
        acks = [AckTree(1, n, -n) for n in range(3000)]  # 72 KB: several frames
        tuples = [TupleDelivery(2, "numbers", 0, DEFAULT_STREAM, (n,)) for n in range(50)]
        sender.send_many([InitTree(1, 5, 6, 2), *tuples, *acks, TreeDone(2, 7)], None)
        wait_for(lambda: len(received.items) == 3052, 30, "every message and tuple")
        assert [m for m in received.items if type(m) is AckTree] == acks
        assert [m for m in received.items if type(m) is TupleDelivery] == tuples
        assert {m for m in received.items if type(m) in (InitTree, TreeDone)} == {
            InitTree(1, 5, 6, 2),
            TreeDone(2, 7),
        }

        push = ctx.socket(zmq.PUSH)
        push.setsockopt(zmq.LINGER, 0)
        curve.connect_as_peer(push, keys)
        push.connect(f"tcp://127.0.0.1:{port}")
        for junk in (PROTOCOL_MAGIC, PROTOCOL_MAGIC + b"\x01" + bytes(8), PROTOCOL_MAGIC + b"\x09"):
            push.send(junk)
        push.send(PROTOCOL_MAGIC + b"\x03" + (2).to_bytes(8, "little") * 2)  # TreeDone(2, 2)
        wait_for(lambda: len(received.items) == 3053, 30, "the frame after the junk")
        assert received.items[-1] == TreeDone(2, 2)
        assert receiver.threads[0].is_alive()
    finally:
        ctx.destroy(linger=0)
        sender.close()
        receiver.close()


def test_a_flush_splits_local_remote_and_unknown_targets_keeping_order():
    keys = new_keys()
    here, there = Received(), Received()
    port = free_port()
    receiver = Transport(
        TransportSettings("127.0.0.1", port, 2**16, keys),
        receiving(there.many, fields_of),
    )
    sender = Transport(
        TransportSettings("127.0.0.1", free_port(), 2**16, keys),
        receiving(here.many, fields_of),
    )
    receiver.start()
    sender.start()
    try:
        sender.route({1: ("127.0.0.1", port), 2: ("127.0.0.1", 1), 3: ("127.0.0.1", port)}, {2})
        flush = [
            TupleDelivery(t, "numbers", 0, DEFAULT_STREAM, (n,))
            for n, t in enumerate([1, 2, 3] * 20)
        ]
        sender.send_many([*flush, AckTree(2, 1, 1), AckTree(3, 2, 2)], None)  # all known
        assert here.items == [d for d in flush if d.target == 2] + [AckTree(2, 1, 1)]
        wait_for(lambda: len(there.items) == 41, 30, "the remote ones")
        assert [d for d in there.items if type(d) is TupleDelivery] == [
            d for d in flush if d.target != 2
        ]
        fail = FailTree(3, 7)
        lost = TupleDelivery(9, "numbers", 0, DEFAULT_STREAM, (0,))  # task 9 has no address
        sender.send_many([flush[0], lost, flush[1], fail], None)
        assert here.items[-1] == flush[1]
        wait_for(lambda: len(there.items) == 43, 30, "the known ones of a flush with a stranger")
        assert there.items[-2:] in ([fail, flush[0]], [flush[0], fail])
    finally:
        sender.close()
        receiver.close()
