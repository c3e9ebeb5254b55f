"""What a row costs to cross from one worker to another, apart from the rest of a worker: two
transports on this thread over ZeroMQ on loopback (as a worker's shared thread runs its own),
the real Inbound and receive queues behind the receiving one. An executor's flushes go to
`send_many`, the sender's pump sends once a send's worth is in, and the receiving transport's
drain hands what arrived to the tasks' queues, which are then emptied as executors would.
Measured in this thread's CPU time, us a row, the sending side and the receiving side apart
(ZeroMQ's I/O threads, which move the bytes, are not in it), best of ROUNDS interleaved runs:

- data: the pertuple bench's tuples (a word and a float, one root) to two tasks of a bolt;
- acks: AckTrees to an acker task;
- work2: the mix bench/pertuple.py's work2 case sends from its bolts' worker to the spout's
  (MIXES; as counted in a work2 run: bench/RESULTS.md, "Crossing between workers, row by
  row").

    .venv/bin/python bench/crossing.py [--rows 128] [--flush 16]
    SQUALL_PURE=1 .venv/bin/python bench/crossing.py    # the per-tuple path interpreted

Security is off here (no CURVE): what it adds is in ZeroMQ's I/O threads.
"""

from __future__ import annotations

import argparse
import random
import threading
import time
from collections.abc import Callable
from typing import Any

from squall.components import TaskContext
from squall.config import cluster_conf
from squall.hot_path import describe
from squall.structure import ComponentInfo, GroupingSpec, InputSpec, TopologyStructure
from squall.worker.acking import AckTree
from squall.worker.delivery import TupleDelivery
from squall.worker.executors import Executor
from squall.worker.inbound import Inbound
from squall.worker.main import tune_garbage_collector
from squall.worker.sender import NOT_DUE
from squall.worker.transport import Receiving, Transport, TransportSettings
from squall.worker.wakeup import FdWake
from squall.zk.server import free_port

UPPER = (3, 4)  # the bolt tasks data rows go to, in the receiving worker
ACKER = 9
ROUNDS = 7
ROWS_PER_ROUND = 60_000
MIXES = {  # rows of each kind per "tuple": (data, acks)
    "data": (1.0, 0.0),
    "acks": (0.0, 1.0),
    "work2": (0.28, 1.1),
}


class NoIO:
    """A TaskIO for executors that only receive here: they never emit."""

    ackers: tuple[int, ...] = ()
    near_ackers: tuple[int, ...] = ()
    local_tasks: frozenset[int] = frozenset()

    def send_many(self, deliveries: list[Any], stopping: threading.Event | None) -> None:
        raise AssertionError("a receiving executor of the bench emitted")

    def deliver_local(self, data: Any, protocol: Any, source: int, stopping: Any) -> None:
        raise AssertionError("a receiving executor of the bench emitted")


def receiving_side(port: int) -> tuple[Transport, dict[int, Executor]]:
    out = {"default": ("word", "ts")}
    words = ComponentInfo("words", "spout", "m", "C", {}, 1, (), out, {})
    shuffled = (InputSpec("words", "default", GroupingSpec("shuffle", ())),)
    upper = ComponentInfo("upper", "bolt", "m", "C", {}, 2, shuffled, out, {})
    structure = TopologyStructure({"words": words, "upper": upper})
    conf = cluster_conf(**{"topology.executor.receive.buffer.size": 10**9})
    executors = {
        task: Executor(None, TaskContext("b", name, task, (task,), "/tmp"), {}, conf, NoIO())
        for task, name in [(UPPER[0], "upper"), (UPPER[1], "upper"), (ACKER, "__acker")]
    }
    inbound = Inbound(structure, executors)
    inbound.fields_of("words", "default")  # cached, as a worker's first deliveries do
    transport = Transport(
        TransportSettings("127.0.0.1", port, 2**26),
        Receiving(
            inbound.deliver_many,
            inbound.fields_of,
            inbound.congested,
            inbound.deliver_rows,
            inbound.load,
            inbound.deliver_protocol,
        ),
    )
    return transport, executors


def sending_side(peer: int, fields_of: Callable[[str, str], tuple[str, ...]]) -> Transport:
    transport = Transport(
        TransportSettings("127.0.0.1", free_port(), 2**26),
        Receiving(
            lambda items, stopping: None,
            fields_of,
            None,
            lambda rows: False,
            lambda task: 0.0,
            lambda messages: None,
        ),
    )
    transport.route({task: ("127.0.0.1", peer) for task in (*UPPER, ACKER)}, set())
    return transport


def flushes(mix: tuple[float, float], per_flush: int, seed: int) -> list[list[Any]]:
    """ROWS_PER_ROUND rows of `mix` as executors' flushes of `per_flush` deliveries."""
    rng = random.Random(seed)
    data_share = mix[0] / (mix[0] + mix[1])
    items: list[Any] = []
    for i in range(ROWS_PER_ROUND):
        root, edge = rng.getrandbits(63), rng.getrandbits(63)
        if rng.random() < data_share:
            values = (f"WORD{i % 1000}", time.time())
            head = (UPPER[i % 2], "words", 1, "default")
            items.append(TupleDelivery(*head, values, (root,), (edge,)))
        else:
            items.append(AckTree(ACKER, root, edge))
    return [items[i : i + per_flush] for i in range(0, len(items), per_flush)]


def run(
    sender: Transport,
    receiver: Transport,
    executors: dict[int, Executor],
    batches: list[list[Any]],
    rows: int,
) -> tuple[float, float]:
    """CPU seconds of the sending side and of the receiving side for `batches`."""
    send_s = receive_s = 0.0
    sender.sender.gather_at = rows
    sender.sender.gather_secs = 3600.0  # a send's worth, not the clock, makes each send
    sent = 0
    for batch in batches:
        began = time.thread_time()
        sender.send_many(batch, None)
        sent += len(batch)
        due = sender.pump()
        send_s += time.thread_time() - began
        if due == NOT_DUE:
            receive_s += take_all(receiver, executors, sent)
            sent = 0
    began = time.thread_time()
    sender.sender.pump(force=True)
    send_s += time.thread_time() - began
    receive_s += take_all(receiver, executors, sent)
    return send_s, receive_s


def take_all(receiver: Transport, executors: dict[int, Executor], expected: int) -> float:
    """Drain until `expected` rows arrived and empty the queues; the CPU seconds of that,
    without the waits for ZeroMQ's I/O thread."""
    spent, got = 0.0, 0
    deadline = time.monotonic() + 30
    while got < expected:
        if not receiver.receiver.ready():
            receiver.receiver.pull.poll(100)
            if time.monotonic() > deadline:
                raise TimeoutError(f"{expected - got} rows did not arrive")
            continue
        began = time.thread_time()
        receiver.read_at = 0.0
        receiver.drain()
        for executor in executors.values():
            got += len(executor.inbox.take(10**9, 0)) + len(executor.inbox.take_protocol())
        spent += time.thread_time() - began
    return spent


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--rows", type=int, default=128, help="rows a send gathers")
    p.add_argument("--flush", type=int, default=16, help="deliveries an executor flushes at once")
    args = p.parse_args()
    port = free_port()
    receiver, executors = receiving_side(port)
    wake_r, wake_s = FdWake(), FdWake()
    receiver.share(wake_r, threading.current_thread())
    sender = sending_side(port, receiver.fields_of)
    sender.share(wake_s, threading.current_thread())
    tune_garbage_collector(cluster_conf()["topology.worker.gc.young.threshold"])  # a worker's
    try:
        sender.pump()  # connects (the route's control item)
        best = {kind: (float("inf"), float("inf")) for kind in MIXES}
        for round_ in range(ROUNDS):  # interleaved: a slow moment of the machine hits each
            for kind, mix in MIXES.items():
                batches = flushes(mix, args.flush, seed=round_)
                send_s, receive_s = run(sender, receiver, executors, batches, args.rows)
                if send_s + receive_s < sum(best[kind]):
                    best[kind] = (send_s, receive_s)
    finally:
        sender.close()
        receiver.close()
    print(f"# {describe()}; {args.rows} rows a send, {args.flush} deliveries a flush")
    print(f"us a row, best of {ROUNDS} interleaved runs of {ROWS_PER_ROUND:,} rows:")
    for kind, (send_s, receive_s) in best.items():
        send, receive = (s / ROWS_PER_ROUND * 1e6 for s in (send_s, receive_s))
        print(f"  {kind:6s} send {send:.2f}  receive {receive:.2f}  both {send + receive:.2f}")


if __name__ == "__main__":
    main()
