"""Tuples between worker processes over ZeroMQ.

Each worker binds a PULL socket on its slot port. Tuples for tasks in the same worker skip
the network; the rest go to a sender thread that owns one PUSH socket per remote worker
(ZeroMQ sockets are not thread-safe) and sends what has queued up for a peer as one multipart
message of frames, each an Arrow record batch (codec.py). ZeroMQ reconnects by itself when a
peer worker restarts.
"""

from __future__ import annotations

import logging
import queue
import threading
from collections import defaultdict
from collections.abc import Callable

import zmq

from .codec import CodecError, FieldsOf, decode, encode
from .delivery import Delivery

log = logging.getLogger("squall.worker.transport")

Address = tuple[str, int]
MAX_DELIVERIES_PER_SEND = 1000


class Transport:
    def __init__(self, port: int, deliver: Callable[[Delivery], None], fields_of: FieldsOf):
        self.ctx = zmq.Context()
        self.pull = self.ctx.socket(zmq.PULL)
        self.pull.setsockopt(zmq.RCVHWM, 100_000)
        self.pull.bind(f"tcp://*:{port}")
        self.deliver = deliver
        self.fields_of = fields_of
        self.outbox: queue.Queue[tuple[Address, Delivery] | None] = queue.Queue()
        self.addresses: dict[int, Address] = {}
        self.local: set[int] = set()
        self.stopping = threading.Event()
        self.threads = [
            threading.Thread(target=self._receive, name="transport-recv", daemon=True),
            threading.Thread(target=self._send, name="transport-send", daemon=True),
        ]

    def start(self) -> None:
        for t in self.threads:
            t.start()

    def route(self, addresses: dict[int, Address], local: set[int]) -> None:
        """Where every task of the topology runs now (called when the assignment changes)."""
        self.addresses = dict(addresses)
        self.local = set(local)

    def send(self, delivery: Delivery) -> None:
        if delivery.target in self.local:
            self.deliver(delivery)
            return
        address = self.addresses.get(delivery.target)
        if address is None:
            log.warning("no address for task %s; tuple dropped", delivery.target)
            return
        self.outbox.put((address, delivery))

    def _receive(self) -> None:
        poller = zmq.Poller()
        poller.register(self.pull, zmq.POLLIN)
        while not self.stopping.is_set():
            if not poller.poll(200):
                continue
            for frame in self.pull.recv_multipart():
                try:
                    deliveries = decode(frame)
                except CodecError as exc:
                    log.warning("dropping a malformed frame of %d bytes: %s", len(frame), exc)
                    continue
                for delivery in deliveries:
                    self.deliver(delivery)

    def _send(self) -> None:
        sockets: dict[Address, zmq.Socket] = {}
        while True:
            item = self.outbox.get()
            if item is None:
                break
            queued: dict[Address, list[Delivery]] = defaultdict(list)
            queued[item[0]].append(item[1])
            count = 1
            while count < MAX_DELIVERIES_PER_SEND:
                try:
                    item = self.outbox.get_nowait()
                except queue.Empty:
                    break
                if item is None:
                    self.stopping.set()
                    break
                queued[item[0]].append(item[1])
                count += 1
            for address, deliveries in queued.items():
                sock = sockets.get(address)
                if sock is None:
                    sock = self.ctx.socket(zmq.PUSH)
                    sock.setsockopt(zmq.SNDHWM, 100_000)
                    sock.setsockopt(zmq.LINGER, 2000)
                    sock.connect(f"tcp://{address[0]}:{address[1]}")
                    sockets[address] = sock
                sock.send_multipart(encode(deliveries, self.fields_of))
            if self.stopping.is_set():
                break
        for sock in sockets.values():
            sock.close()

    def close(self) -> None:
        self.outbox.put(None)
        self.threads[1].join(5)
        self.stopping.set()
        self.threads[0].join(2)
        self.pull.close(linger=0)
        self.ctx.term()
