"""ZeroMQ CURVE on worker ports, with per-topology keys, as an attacker on the network meets it.

Against a live cluster (security on, the default): a forged tuple sent by a plain ZeroMQ client
or by a CURVE client with its own keypair never reaches the bolt, while the same tuple sent with
the topology's keys does (so the probe could tell); a message of too many parts is dropped; the
topology's secret is in ZooKeeper only; `security: false` keeps plain ZeroMQ and writes no
keys. Against the Transport itself: a too-many-parts message is never held in Python.
"""

import os
import signal
import socket
import threading
import tracemalloc
from pathlib import Path

import pytest
import zmq
from zmq.utils.monitor import recv_monitor_message

from squall.local import LocalCluster, topology_id, topology_progress, wait_for, wait_until_quiet
from squall.records import Assignment, WorkerBeat
from squall.security.topology_keys import TopologyKeys, decode_keys, new_keys
from squall.submit import submit_file
from squall.thrift_api import DEFAULT_STREAM
from squall.worker import curve
from squall.worker.codec import encode
from squall.worker.delivery import TupleDelivery
from squall.worker.framing import frame_limit
from squall.worker.transport import Transport, TransportSettings
from squall.zk import connection as zk_mod
from squall.zk.server import free_port
from tests.unit.receiving_doubles import receiving

from .test_worker_ports import rss_bytes, worker_pids

TINY = Path(__file__).parents[1] / "integration" / "topologies" / "tiny.py"
EMITTED = 200  # tiny.py: two spouts of 100 numbers each


def fields_of(component: str, stream: str) -> tuple[str, ...]:
    return ("n",)


def forged(target: int, source_task: int) -> list[bytes]:
    """A well-formed tuple from `numbers` to the sink task `target`: what would be counted."""
    delivery = TupleDelivery(target, "numbers", source_task, DEFAULT_STREAM, (7,))
    return encode([delivery], fields_of)


def push_socket(ctx: zmq.Context, keys: TopologyKeys | None, server: bytes | None = None):
    sock = ctx.socket(zmq.PUSH)
    sock.setsockopt(zmq.LINGER, 0)
    if keys:
        sock.curve_serverkey = server or keys.public
        sock.curve_publickey, sock.curve_secretkey = keys.public, keys.secret
    return sock


def handshake_event(sock: zmq.Socket, port: int, first: list[bytes] | None = None) -> int:
    """Connect `sock` and wait (with a deadline) for its handshake to succeed or fail;
    `first` is sent five times right after connecting, before the handshake is done."""
    monitor = sock.get_monitor_socket()
    try:
        sock.connect(f"tcp://127.0.0.1:{port}")
        for _ in range(5 if first else 0):
            sock.send_multipart(first, zmq.NOBLOCK)
        ends = {zmq.EVENT_HANDSHAKE_SUCCEEDED, zmq.EVENT_HANDSHAKE_FAILED_NO_DETAIL}
        ends |= {zmq.EVENT_HANDSHAKE_FAILED_PROTOCOL, zmq.EVENT_HANDSHAKE_FAILED_AUTH}
        for _ in range(50):
            if not monitor.poll(10_000):
                break
            event = recv_monitor_message(monitor)["event"]
            if event in ends:
                return event
        raise AssertionError("no handshake outcome within the deadline")
    finally:
        sock.disable_monitor()
        monitor.close(linger=0)


def listens(port: int) -> bool:
    try:
        socket.create_connection(("127.0.0.1", port), timeout=5).close()
    except ConnectionRefusedError:
        return False
    return True


# --- a live cluster ---


@pytest.fixture(scope="module")
def cluster(tmp_path_factory):
    with LocalCluster(tmp_path_factory.mktemp("cluster"), supervisors=1) as c:
        yield c


@pytest.fixture(scope="module")
def tiny(cluster):
    """tiny.py run to the end (every tuple executed), its id, keys and a sink task's slot."""
    conf = cluster.client_conf()
    with cluster.client() as client:
        name = submit_file(client, TINY, conf, name="curve")
        tid = topology_id(client, name)
    done = wait_until_quiet(conf, tid, 120)
    assert done["executed"] == EMITTED and done["errors"] == 0
    zk = zk_mod.connect(conf, "nimbus")
    try:
        lay = zk_mod.layout(conf)
        keys = decode_keys(zk.get(lay.credentials(tid))[0], lay.credentials(tid))
        tasks = {
            int(t): zk.get(lay.task(tid, t))[0].decode() for t in zk.get_children(lay.tasks(tid))
        }
        assignment = zk_mod.read_record(zk, Assignment, lay.assignment(tid))
    finally:
        zk.stop()
        zk.close()
    sink = min(t for t, c in tasks.items() if c == "sink")
    spout = min(t for t, c in tasks.items() if c == "numbers")
    yield conf, tid, keys, sink, spout, assignment.task_slots[sink][1]
    with cluster.client() as client:
        client.killTopology(name)


def beat_seqs(conf, tid) -> dict[str, int]:
    zk = zk_mod.connect(conf, "nimbus")
    try:
        beats = zk_mod.read_records(zk, WorkerBeat, zk_mod.layout(conf).taskbeats(tid))
    finally:
        zk.stop()
        zk.close()
    return {slot: beat.seq for slot, beat in beats.items()}


def executed_after_fresh_beats(conf, tid) -> int:
    """The executed count once every worker beat twice more: anything delivered before the
    call has been executed and counted by then."""
    first = beat_seqs(conf, tid)
    wait_for(
        lambda: all(seq >= first[slot] + 2 for slot, seq in beat_seqs(conf, tid).items()),
        30,
        "two fresh beats of every worker",
    )
    return topology_progress(conf, tid)["executed"]


def test_strangers_cannot_deliver_forged_tuples_key_holders_can(cluster, tiny):
    conf, tid, keys, sink, spout, port = tiny
    ctx = zmq.Context()
    try:
        tuple_ = forged(sink, spout)  # queued while connecting: sent if the handshake passes
        plain = push_socket(ctx, None)
        assert handshake_event(plain, port, tuple_) in (  # the mechanism mismatch, as seen
            zmq.EVENT_HANDSHAKE_FAILED_NO_DETAIL,
            zmq.EVENT_HANDSHAKE_FAILED_PROTOCOL,
        )
        stranger = push_socket(ctx, new_keys(), server=keys.public)
        assert handshake_event(stranger, port, tuple_) == zmq.EVENT_HANDSHAKE_FAILED_AUTH
        assert executed_after_fresh_beats(conf, tid) == EMITTED
        holder = push_socket(ctx, keys)
        assert handshake_event(holder, port, tuple_) == zmq.EVENT_HANDSHAKE_SUCCEEDED
        assert executed_after_fresh_beats(conf, tid) == EMITTED + 5
        for sock in (plain, stranger, holder):
            sock.close(linger=0)
    finally:
        ctx.destroy(linger=0)
    logs = cluster.directory.glob("supervisor1/supervisor/logs/worker-*.log")
    assert any("refused 1 CURVE client(s)" in log.read_text() for log in logs)


def test_a_message_of_too_many_parts_is_dropped_and_the_worker_does_not_grow(cluster, tiny):
    conf, tid, keys, sink, spout, port = tiny
    before = executed_after_fresh_beats(conf, tid)
    pids = worker_pids(cluster)
    rss = {pid: rss_bytes(pid) for pid in pids}
    ctx = zmq.Context()
    try:
        holder = push_socket(ctx, keys)
        assert handshake_event(holder, port) == zmq.EVENT_HANDSHAKE_SUCCEEDED
        parts = forged(sink, spout) * 5000  # each a tuple the bolt would count
        for _ in range(20):
            holder.send_multipart(parts)
        holder.close(linger=10_000)
    finally:
        ctx.destroy(linger=0)

    def logged() -> bool:
        logs = cluster.directory.glob("supervisor1/supervisor/logs/worker-*.log")
        return any("message(s) over 1000 parts" in log.read_text() for log in logs)

    wait_for(logged, 60, "the dropped message to be logged")
    assert executed_after_fresh_beats(conf, tid) == before
    assert set(worker_pids(cluster)) == set(pids)
    for pid in pids:
        assert rss_bytes(pid) - rss[pid] < 64 * 2**20


def test_the_secret_is_in_zookeeper_only(cluster, tiny):
    conf, tid, keys, *_ = tiny
    secret = keys.secret
    with cluster.client() as client:
        assert secret.decode() not in client.getTopologyConf(tid)
        assert secret.decode() not in client.getNimbusConf()
    for pid in worker_pids(cluster):
        assert secret not in Path(f"/proc/{pid}/cmdline").read_bytes()
        assert secret not in Path(f"/proc/{pid}/environ").read_bytes()
    zookeeper = cluster.directory / "zookeeper" / "data"  # ZooKeeper holds it: its store
    scanned = 0
    for path in cluster.directory.rglob("*"):
        if path.is_file() and zookeeper not in path.parents:
            assert secret not in path.read_bytes(), f"the topology's secret is in {path}"
            scanned += 1
    assert scanned > 10  # the package, confs, the store and every log were there to scan


def test_keys_are_removed_with_the_topology(cluster):
    conf = cluster.client_conf()
    with cluster.client() as client:
        name = submit_file(client, TINY, conf, name="gone", inactive=True)
        tid = topology_id(client, name)
    zk = zk_mod.connect(conf, "nimbus")
    try:
        path = zk_mod.layout(conf).credentials(tid)
        assert zk.exists(path)
        with cluster.client() as client:
            client.killTopology(name)
        wait_for(lambda: not zk.exists(path), 60, "the topology's keys to be removed")
    finally:
        zk.stop()
        zk.close()


def test_a_worker_without_its_keys_exits_until_a_new_leader_makes_them(cluster):
    """Its keys deleted (as for a topology made in open mode) and a worker ended, the
    supervisor's restarts log why they cannot start and exit, and nothing listens on the slot;
    the next nimbus to take the lead makes new keys and the worker serves CURVE with them."""
    conf = cluster.client_conf()
    with cluster.client() as client:
        name = submit_file(client, TINY, conf, name="nokeys", inactive=True)
        tid = topology_id(client, name)
    try:
        wait_for(lambda: topology_progress(conf, tid), 120, "every task to heartbeat")
        path = zk_mod.layout(conf).credentials(tid)
        zk = zk_mod.connect(conf, "nimbus")
        try:
            zk.delete(path)
        finally:
            zk.stop()
            zk.close()
        workers = cluster.directory / "supervisor1" / "supervisor" / "workers"
        pid_file = next(workers.glob(f"{tid}-*.pid"))
        port = int(pid_file.stem.rpartition("-")[2])
        os.kill(int(pid_file.read_text()), signal.SIGTERM)
        log = cluster.directory / "supervisor1" / "supervisor" / "logs" / f"worker-{tid}-{port}.log"
        wait_for(
            lambda: (
                "cannot start securely" in log.read_text()
                and "no CURVE keys for" in log.read_text()
            ),
            60,
            "a restarted worker to refuse to start without keys",
        )
        assert not listens(port)
        cluster.restart_nimbus()
        zk = zk_mod.connect(conf, "nimbus")
        try:
            data = wait_for(lambda: zk.get(path)[0], 60, "the new leader to make keys")
        finally:
            zk.stop()
            zk.close()
        keys = decode_keys(data, path)
        wait_for(lambda: listens(port), 60, "the worker to start with the new keys")
        ctx = zmq.Context()
        try:
            holder = push_socket(ctx, keys)
            assert handshake_event(holder, port) == zmq.EVENT_HANDSHAKE_SUCCEEDED
        finally:
            ctx.destroy(linger=0)
    finally:
        with cluster.client() as client:
            client.killTopology(name)


def test_open_mode_speaks_plain_zeromq_and_writes_no_keys(tmp_path):
    with LocalCluster(tmp_path / "open", supervisors=1, conf={"security": False}) as cluster:
        conf = cluster.client_conf()
        with cluster.client() as client:
            tid = topology_id(client, submit_file(client, TINY, conf, name="open"))
        assert wait_until_quiet(conf, tid, 120)["executed"] == EMITTED
        zk = zk_mod.connect(conf, "nimbus")
        try:
            lay = zk_mod.layout(conf)
            assert not zk.exists(lay.credentials(tid))
            assignment = zk_mod.read_record(zk, Assignment, lay.assignment(tid))
        finally:
            zk.stop()
            zk.close()
        ctx = zmq.Context()
        try:
            plain = push_socket(ctx, None)
            port = next(iter(assignment.slots()))[1]
            assert handshake_event(plain, port) == zmq.EVENT_HANDSHAKE_SUCCEEDED
            plain.close(linger=0)
        finally:
            ctx.destroy(linger=0)


# --- the Transport alone ---


class Received:
    def __init__(self) -> None:
        self.items: list[TupleDelivery] = []
        self.arrived = threading.Event()

    def __call__(self, deliveries: list[TupleDelivery], stopping: object = None) -> None:
        self.items.extend(deliveries)
        self.arrived.set()


def test_a_too_many_parts_message_is_read_a_part_at_a_time_and_let_go():
    """Python never holds the message: while the worker drops 5 MB in 5000 parts, Python's
    peak allocation stays under 1 MB (recv_multipart would hold all 5 MB; a transport of
    64 KiB messages holds at most that much of it), and what comes after is delivered."""
    keys = new_keys()
    received = Received()
    port = free_port()
    receiver = Transport(
        TransportSettings("127.0.0.1", port, 2**16, keys),
        receiving(received, fields_of),
    )
    receiver.start()
    ctx = zmq.Context()
    try:
        holder = push_socket(ctx, keys)
        assert handshake_event(holder, port) == zmq.EVENT_HANDSHAKE_SUCCEEDED
        tracemalloc.start()
        holder.send_multipart([bytes(1000)] * 5000)
        holder.send_multipart(forged(1, 0))
        assert received.arrived.wait(30)
        _, peak = tracemalloc.get_traced_memory()
        tracemalloc.stop()
        assert peak < 2**20
        assert [d.values for d in received.items] == [(7,)]
        holder.close(linger=0)
    finally:
        ctx.destroy(linger=0)
        receiver.close()


def test_transports_with_the_topology_keys_talk_through_curve():
    keys = new_keys()
    received = Received()
    port = free_port()
    receiver = Transport(
        TransportSettings("127.0.0.1", port, 2**20, keys),
        receiving(received, fields_of),
    )
    sender = Transport(
        TransportSettings("127.0.0.1", free_port(), 2**20, keys),
        receiving(lambda ds, stopping: None, fields_of),
    )
    receiver.start()
    sender.start()
    try:
        sender.route({1: ("127.0.0.1", port)}, set())
        values = [f"{n:05d}" + "x" * 10_000 for n in range(3000)]  # 30 MB: many messages
        for value in values:
            sender.send_many([TupleDelivery(1, "numbers", 0, DEFAULT_STREAM, (value,))], None)
        wait_for(lambda: len(received.items) == len(values), 60, "every tuple")
        assert sorted(d.values[0] for d in received.items) == values
    finally:
        sender.close()
        receiver.close()


def test_a_full_frame_fits_under_maxmsgsize_through_curve_a_larger_one_does_not():
    """CURVE wraps each frame in 33 more bytes and MAXMSGSIZE counts them: a frame of
    frame_limit bytes (what senders keep to) arrives; one of worker.max.message.bytes is
    refused, only its sender cut off, and what that sender sends next arrives."""
    keys = new_keys()
    max_bytes = 2**16
    ctx = zmq.Context()
    pull = ctx.socket(zmq.PULL)
    pull.setsockopt(zmq.MAXMSGSIZE, max_bytes)
    auth = curve.serve(ctx, pull, keys)
    try:
        port = pull.bind_to_random_port("tcp://127.0.0.1")
        push = ctx.socket(zmq.PUSH)
        push.setsockopt(zmq.LINGER, 0)
        curve.connect_as_peer(push, keys)
        assert handshake_event(push, port) == zmq.EVENT_HANDSHAKE_SUCCEEDED
        push.send(b"a" * max_bytes)
        push.send(b"b" * frame_limit(max_bytes))
        assert pull.poll(10_000) and pull.recv() == b"b" * frame_limit(max_bytes)
        assert not pull.poll(300)  # the frame of max_bytes never arrives
    finally:
        auth.stop()
        ctx.destroy(linger=0)
