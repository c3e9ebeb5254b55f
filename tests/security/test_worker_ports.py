"""Probes of a worker's ports as an attacker on the same network would make them, against a
live local cluster: the ports listen on the supervisor's address only, and an oversized frame
(a 512 MiB header, a little of its body) is refused without the worker reading it, growing, or
dying, while its topology keeps processing. The ports speak CURVE (test_worker_curve.py): the
raw oversized frame, in plain ZMTP, is now refused at the greeting already, and the junk is
sent with the topology's keys, as only a key holder's junk reaches the codec."""

import os
import random
import socket
import struct
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

from squall.local import LocalCluster, topology_id, topology_progress, wait_for
from squall.security.topology_keys import TopologyKeys, decode_keys
from squall.submit import submit_file
from squall.zk import connection as zk_mod

ENDLESS = Path(__file__).parent / "topologies" / "endless.py"
HUGE = 512 * 2**20


@pytest.fixture(scope="module")
def cluster(tmp_path_factory):
    with LocalCluster(tmp_path_factory.mktemp("cluster"), supervisors=1) as c:
        yield c


@pytest.fixture(scope="module")
def running(cluster):
    """The endless topology, its conf and id, once every task beats; killed afterwards."""
    conf = cluster.client_conf()
    with cluster.client() as client:
        name = submit_file(client, ENDLESS, conf)
        tid = topology_id(client, name)
    wait_for(lambda: topology_progress(conf, tid), 120, "every task to heartbeat")
    yield conf, tid
    with cluster.client() as client:
        client.killTopology(name)


def worker_pids(cluster) -> list[int]:
    pid_files = cluster.directory.glob("supervisor*/supervisor/workers/*.pid")
    return [int(p.read_text()) for p in pid_files]


def listening(pid: int) -> set[tuple[str, int]]:
    """(address, port) of every TCP socket process `pid` listens on, from /proc."""
    inodes = set()
    for fd in Path(f"/proc/{pid}/fd").iterdir():
        try:
            target = fd.readlink().name
        except OSError:
            continue
        if target.startswith("socket:["):
            inodes.add(target[8:-1])
    found = set()
    for table, width in (("tcp", 4), ("tcp6", 16)):
        for line in Path(f"/proc/{pid}/net/{table}").read_text().splitlines()[1:]:
            cols = line.split()
            if cols[3] != "0A" or cols[9] not in inodes:  # 0A: LISTEN
                continue
            hex_address, hex_port = cols[1].split(":")
            raw = bytes.fromhex(hex_address)
            if width == 4:
                address = socket.inet_ntop(socket.AF_INET, raw[::-1])
            else:
                words = b"".join(raw[i : i + 4][::-1] for i in range(0, 16, 4))
                address = socket.inet_ntop(socket.AF_INET6, words)
            found.add((address, int(hex_port, 16)))
    return found


def rss_bytes(pid: int) -> int:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1]) * 1024
    raise AssertionError(f"no VmRSS for {pid}")


def zmtp_push_greeting() -> bytes:
    """ZMTP 3.0, NULL mechanism, as a PUSH socket: greeting and READY command."""
    greeting = b"\xff" + bytes(8) + b"\x7f" + bytes([3, 0]) + b"NULL".ljust(20, b"\0")
    greeting += b"\0" + bytes(31)
    body = b"\x05READY" + b"\x0bSocket-Type" + struct.pack(">I", 4) + b"PUSH"
    return greeting + b"\x04" + bytes([len(body)]) + body


def send_oversized(port: int, seed: int) -> bool:
    """Announce a 512 MiB frame and send up to 4 MiB of it; True when the worker hung up
    before taking it all (it must: the frame is over worker.max.message.bytes)."""
    body = random_bytes(seed, 2**16)
    with socket.create_connection(("127.0.0.1", port), timeout=10) as s:
        try:
            s.sendall(zmtp_push_greeting())  # a CURVE port hangs up here: not its mechanism
            s.sendall(b"\x02" + struct.pack(">Q", HUGE))  # last frame, long size
            for _ in range(64):
                s.sendall(body)
        except (BrokenPipeError, ConnectionResetError):
            return True
        s.settimeout(10)
        try:
            while s.recv(65536):
                pass
        except ConnectionResetError:
            pass
        except TimeoutError:
            return False  # still waiting for the rest of the 512 MiB
        return True


def random_bytes(seed: int, size: int) -> bytes:
    return random.Random(seed).randbytes(size)


def topology_keys(conf, tid) -> TopologyKeys:
    zk = zk_mod.connect(conf, "nimbus")
    try:
        path = zk_mod.layout(conf).credentials(tid)
        return decode_keys(zk.get(path)[0], path)
    finally:
        zk.stop()
        zk.close()


def send_junk(port: int, seed: int, keys: TopologyKeys) -> None:
    """Frames under the size limit that are not squall frames (they are dropped and logged),
    sent by a holder of the topology's keys."""
    import zmq

    rng = random.Random(seed)
    ctx = zmq.Context()
    push = ctx.socket(zmq.PUSH)
    push.curve_serverkey = keys.public
    push.curve_publickey, push.curve_secretkey = keys.public, keys.secret
    try:
        push.connect(f"tcp://127.0.0.1:{port}")
        for _ in range(20):
            push.send_multipart([rng.randbytes(rng.randrange(1, 65536)) for _ in range(3)])
    finally:
        push.close(linger=5000)  # delivered, or given up on, before the context ends
        ctx.term()


def executed(conf, tid) -> int:
    progress = topology_progress(conf, tid)
    return progress["executed"] if progress else -1


def test_worker_ports_listen_on_the_supervisor_address_only(cluster, running):
    pids = worker_pids(cluster)
    assert len(pids) == 2
    slots = set(
        yaml.safe_load((cluster.directory / "supervisor1.yaml").read_text())[
            "supervisor.slots.ports"
        ]
    )
    for pid in pids:
        sockets = listening(pid)
        assert {port for _, port in sockets} & slots, f"worker {pid} is not on its slot"
        assert {address for address, _ in sockets} == {"127.0.0.1"}, sockets


def test_oversized_and_junk_frames_are_refused_and_the_topology_keeps_going(cluster, running):
    conf, tid = running
    pids = worker_pids(cluster)
    ports = {pid: {port for _, port in listening(pid)} for pid in pids}
    before = {pid: rss_bytes(pid) for pid in pids}
    keys = topology_keys(conf, tid)
    for seed, pid in enumerate(pids):
        for port in ports[pid]:
            assert send_oversized(port, seed)
            send_junk(port, seed, keys)
    for pid in pids:
        assert Path(f"/proc/{pid}").exists(), f"worker {pid} died"
        assert rss_bytes(pid) - before[pid] < 64 * 2**20
    assert set(worker_pids(cluster)) == set(pids)  # not restarted either
    logs = list(cluster.directory.glob("supervisor1/supervisor/logs/worker-*.log"))
    reports = sum(log.read_text().count("malformed frame") for log in logs)
    assert 1 <= reports <= 2 * len(logs)  # 60 junk frames a worker, logged once per 10 s
    start = executed(conf, tid)
    deadline_count = start + 200
    wait_for(lambda: executed(conf, tid) >= deadline_count, 60, "the topology to keep going")
    assert set(worker_pids(cluster)) == set(pids)


SPARK_WORKER = """
import sys
from pathlib import Path
from pyspark import SparkContext
from squall.worker.spark import SparkHolder

conf = {"spark.master": "local[1]", "spark.sql.shuffle.partitions": 1}
holder = SparkHolder(conf, "squall-ports", Path(sys.argv[1]), "127.0.0.2", "127.0.0.2")
holder.session()
print(SparkContext._gateway.proc.pid, flush=True)
sys.stdin.read()  # hold the session until the test closes our stdin
holder.stop()
"""


def test_a_workers_spark_driver_listens_on_the_worker_address_only(tmp_path):
    """The SparkSession a worker starts, left to squall's defaults: its driver RPC and block
    manager are on the worker's address (127.0.0.2 here, which Spark would not pick by
    itself), Py4J on loopback, nothing on every interface. It runs in a process of its own,
    as in a worker: this one may hold a SparkSession of other tests already."""
    env = {k: v for k, v in os.environ.items() if k != "SPARK_LOCAL_IP"}
    process = subprocess.Popen(
        [sys.executable, "-c", SPARK_WORKER, str(tmp_path / "handoff")],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        text=True,
        env=env,
    )
    try:
        jvm = int(process.stdout.readline())
        sockets = listening(jvm)
        assert sockets, "the JVM listens on nothing"
        addresses = {address for address, _ in sockets}
        assert "127.0.0.2" in addresses or "::ffff:127.0.0.2" in addresses, sockets
        assert addresses <= {"127.0.0.1", "::ffff:127.0.0.1", "127.0.0.2", "::ffff:127.0.0.2"}
    finally:
        process.stdin.close()
        try:
            process.wait(60)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait()
