"""Control-plane scale (issue #15 item 4): a real ZooKeeper and a real nimbus process, with N
simulated workers on N/SLOTS simulated supervisors that do what the real ones do in
ZooKeeper, without Spark or worker processes: each supervisor registers its ephemeral
/supervisors node on a session of its own, watches /assignments and re-reads the assignments
whose watch fired, and all of them every supervisor.assignments.full.read.secs (as
supervisor/assignment_watch.py does), and each worker of an assignment writes one WorkerBeat
per worker.heartbeat.frequency.secs with its tasks' counters (worker/zk_agent.py's beat).
Measured in the steady state: ZooKeeper write transactions/s (from the server's zxid), beat
bytes/s, nimbus CPU per monitor round and resident memory, supervisors' assignment reads/s;
then one supervisor is lost (its session closed) and two times are taken: until nimbus has
written every affected assignment (the nodes' mtime, ZooKeeper's own clock on this host:
nimbus's reaction, free of the simulator's lag) and until simulated supervisors elsewhere
hold all its tasks. Nimbus's own account of that reaction comes from its log
(nimbus/controller.py): the supervisors' read, the wait in the controller queue, the decision
(wall time and the controller thread's CPU) and the writes; and nimbus's process CPU from
the loss until the last write. Security off: the ACLs change no counts.

    .venv/bin/python bench/controlplane.py 100 1000 5000
"""

from __future__ import annotations

import functools
import os
import re
import sys
import tempfile
import threading
import time
from pathlib import Path

from kazoo.client import KazooClient
from kazoo.exceptions import NoNodeError

from squall import __version__
from squall.local import LocalCluster, wait_for
from squall.records import Assignment, SupervisorInfo, WorkerBeat, decode, encode
from squall.submit import submit_file
from squall.supervisor.sync import desired_workers
from squall.zk.connection import read_records
from squall.zk.layout import ZkLayout
from squall.zk.server import four_letters

HERE = Path(__file__).parent
# per simulated supervisor; 40 for 5000 workers: the test ZooKeeper server takes 200
# connections from one address, and each simulated supervisor holds one
SLOTS = int(os.environ.get("CONTROLPLANE_SLOTS", "10"))
WORKERS_PER_TOPOLOGY = 50
WINDOW_SECS = 30.0  # three nimbus monitor rounds
CONF = {
    "security": False,
    "nimbus.monitor.freq.secs": 10,
    "supervisor.monitor.frequency.secs": 3,
    "supervisor.assignments.full.read.secs": 30,
    "worker.heartbeat.frequency.secs": 1,
    "storm.zookeeper.session.timeout": 20000,
}
LAYOUT = ZkLayout("/squall")
TASK_STATS = {  # what worker/executors.py's snapshot holds for an idle task
    "emitted": {},
    "transferred": {},
    "executed": 0,
    "acked": 0,
    "failed": 0,
    "errors": 0,
    "pending": 0,
    "idle": True,
    "ready": True,
}


class Counter:
    def __init__(self) -> None:
        self.lock = threading.Lock()
        self.writes = self.bytes = 0

    def add(self, size: int) -> None:
        with self.lock:
            self.writes += 1
            self.bytes += size


class SimSupervisor:
    """One supervisor and its workers' heartbeats; `io` (a client shared by several
    simulated supervisors) carries their reads and beats, `session` only the registration."""

    def __init__(self, sid: str, hosts: str, io: KazooClient, beats: Counter) -> None:
        self.id, self.io, self.beats = sid, io, beats
        self.ports = list(range(6700, 6700 + SLOTS))
        self.session = KazooClient(
            hosts=hosts, timeout=CONF["storm.zookeeper.session.timeout"] / 1000
        )
        self.session.start()
        info = SupervisorInfo("127.0.0.1", self.ports, int(time.time()), __version__)
        self.session.create(LAYOUT.supervisor(sid), encode(info), ephemeral=True, makepath=True)
        self.workers: dict = {}
        self.assignments: dict[str, Assignment] = {}
        self.seq = 0
        self.started = time.monotonic()
        self.lost = False

    def sync(self, names: set[str], present: set[str], reads: Counter) -> None:
        """What the real sync reads: the assignments `names` (those whose watch fired, or all
        of them), and the epoch when any was read. The same reads reach ZooKeeper; each
        distinct assignment is decoded once for all simulated supervisors, or their decoding
        alone would be the bottleneck of this one process."""
        pending = [(t, self.io.get_async(LAYOUT.assignment(t))) for t in sorted(names)]
        kept = {t: a for t, a in self.assignments.items() if t in present and t not in names}
        for t, answer in pending:
            reads.add(0)
            try:
                kept[t] = decoded(t, answer.get()[0])
            except NoNodeError:
                continue
        self.assignments = kept
        if names:
            self.io.get(LAYOUT.nimbus_epoch)
            reads.add(0)
        self.workers = desired_workers(self.id, self.assignments, self.ports)

    def beat(self) -> None:
        self.seq += 1
        for (tid, port), spec in list(self.workers.items()):
            beat = WorkerBeat(
                self.seq,
                int(time.time()),
                int(time.monotonic() - self.started),
                {t: TASK_STATS for t in spec.tasks},
            )
            data = encode(beat)
            path = LAYOUT.taskbeat(tid, self.id, port)
            self.io.set_async(path, data).rawlink(lambda r, p=path, d=data: self._created(r, p, d))
            self.beats.add(len(data))

    def _created(self, result, path: str, data: bytes) -> None:
        try:
            result.get()
        except NoNodeError:  # the first beat creates the node, as the worker's does
            self.io.create_async(path, data, makepath=True)

    def lose(self) -> None:
        self.lost = True
        self.workers = {}
        self.session.stop()
        self.session.close()


@functools.lru_cache(maxsize=4096)
def decoded(tid: str, data: bytes) -> Assignment:
    return decode(Assignment, data, tid)


def say(text: str) -> None:
    print(f"{time.strftime('%H:%M:%S')} {text}", file=sys.stderr, flush=True)


def zxid(cluster: LocalCluster) -> int:
    text = four_letters(cluster.zookeeper.address, cluster.zookeeper.port, b"srvr").decode()
    return int(next(line for line in text.splitlines() if line.startswith("Zxid"))[6:], 16)


def cpu_secs(pid: int) -> float:
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def rss_mb(pid: int) -> float:
    line = next(
        x for x in Path(f"/proc/{pid}/status").read_text().splitlines() if x.startswith("VmRSS")
    )
    return int(line.split()[1]) / 1024


def monitor_reads(io: KazooClient, tids: list[str]) -> float:
    """Wall time of what a nimbus monitor round reads (nimbus/controller.py's monitor: every
    topology's beats, the supervisors), best of three, through squall.zk.connection as nimbus
    reads."""
    times = []
    for _ in range(3):
        start = time.perf_counter()
        for tid in tids:
            read_records(io, WorkerBeat, LAYOUT.taskbeats(tid))
        read_records(io, SupervisorInfo, LAYOUT.supervisors)
        times.append(time.perf_counter() - start)
    return min(times)


DECIDED = re.compile(
    r"SupervisorsChanged: ([\d.]+) s after its reads, decided in ([\d.]+) s \(([\d.]+) s CPU\), "
    r"\d+ instructions carried out in ([\d.]+) s"
)
READ = re.compile(r"supervisor change: \d+ supervisors read in ([\d.]+) s")


def decision_parts(path: Path, offset: int) -> dict | None:
    """What nimbus's log says of its reaction (nimbus/controller.py): the supervisors' read,
    the wait in the controller queue, the decision (wall and the controller thread's CPU)
    and the writes; None until the decision's line is there."""
    with path.open("rb") as f:
        f.seek(offset)
        text = f.read().decode(errors="replace")
    decided, read = DECIDED.search(text), READ.search(text)
    if decided is None or read is None:
        return None
    queue, wall, cpu, writes = (float(x) for x in decided.groups())
    return {
        "sup_read_s": float(read.group(1)),
        "queue_s": queue,
        "decide_s": wall,
        "decide_cpu_s": cpu,
        "writes_s": writes,
    }


def beating(io: KazooClient, tids: list[str]) -> int:
    return sum(
        len(io.get_children(LAYOUT.taskbeats(t))) for t in tids if io.exists(LAYOUT.taskbeats(t))
    )


def run(n: int) -> dict:
    with (
        tempfile.TemporaryDirectory() as tmp,
        LocalCluster(Path(tmp), supervisors=0, conf=CONF) as cluster,
    ):
        hosts = cluster.zookeeper.hosts
        say(f"N={n}: cluster up in {tmp}")
        ios = [KazooClient(hosts=hosts, timeout=20) for _ in range(8)]
        for io in ios:
            io.start()
        beats = Counter()
        sims = [
            SimSupervisor(f"sim{i:05d}", hosts, ios[i % len(ios)], beats)
            for i in range(-(-n // SLOTS))
        ]
        stop, wake = threading.Event(), threading.Event()
        watched: set[str] = set()
        lock = threading.Lock()
        fired: set[str] = set()
        present: set[str] = set()
        reads = Counter()

        def _fired(tid: str, *_: object) -> None:
            with lock:
                fired.add(tid)
            wake.set()

        @ios[0].ChildrenWatch(LAYOUT.assignments)
        def _assignments(children: list[str]) -> None:  # as the real supervisors watch
            with lock:
                present.clear()
                present.update(children)
            for tid in set(children) - watched:
                watched.add(tid)
                ios[0].DataWatch(LAYOUT.assignment(tid))(functools.partial(_fired, tid))
            wake.set()

        def loop() -> None:
            next_full = 0.0
            known: set[str] = set()
            period = CONF["supervisor.assignments.full.read.secs"]
            while not stop.wait(CONF["worker.heartbeat.frequency.secs"] - (time.monotonic() % 1)):
                with lock:
                    names, now_present = set(fired), set(present)
                    fired.clear()
                wake.clear()
                if time.monotonic() >= next_full:
                    next_full = time.monotonic() + period
                    names = now_present
                else:  # fired, and new ones (supervisor/sync.py assignment_reads)
                    names = (names | (now_present - known)) & now_present
                known = now_present
                if names or any(set(s.assignments) - now_present for s in sims):
                    for sim in sims:
                        if not sim.lost:
                            sim.sync(names, now_present, reads)
                for sim in sims:
                    sim.beat()

        say(f"{len(sims)} supervisors registered")
        driver = threading.Thread(target=loop, daemon=True)
        driver.start()
        tids = []
        with cluster.client() as client:
            for i in range(n // WORKERS_PER_TOPOLOGY):
                overrides = {"topology.workers": WORKERS_PER_TOPOLOGY}
                name = submit_file(
                    client,
                    HERE / "controlplane_topology.py",
                    cluster.client_conf(),
                    name=f"cp{i}",
                    overrides=overrides,
                )
                tids.append(
                    next(t.id for t in client.getClusterInfo().topologies if t.name == name)
                )
        say(f"{len(tids)} topologies submitted")
        wait_for(lambda: beating(ios[0], tids) == n, 600, f"{n} workers beating", interval=1)
        pid = cluster.processes["nimbus"].pid
        z0, c0, b0, w0, r0, t0 = (
            zxid(cluster),
            cpu_secs(pid),
            beats.bytes,
            beats.writes,
            reads.writes,
            time.monotonic(),
        )
        time.sleep(WINDOW_SECS)  # the measurement window: steady state, nothing waited on
        z1, c1, b1, w1, r1, t1 = (
            zxid(cluster),
            cpu_secs(pid),
            beats.bytes,
            beats.writes,
            reads.writes,
            time.monotonic(),
        )
        rounds = (t1 - t0) / CONF["nimbus.monitor.freq.secs"]
        result = {
            "workers": n,
            "supervisors": len(sims),
            "topologies": len(tids),
            "zk_writes_per_s": (z1 - z0) / (t1 - t0),
            "beats_per_s": (w1 - w0) / (t1 - t0),
            "beat_bytes_per_s": (b1 - b0) / (t1 - t0),
            "supervisor_reads_per_s": (r1 - r0) / (t1 - t0),
            "nimbus_cpu_per_round_s": (c1 - c0) / rounds,
            "nimbus_rss_mb": rss_mb(pid),
            "monitor_reads_s": monitor_reads(ios[-1], tids),
        }
        say(f"measured: {result}")
        victim = sims[0]
        moved = {(tid, t) for (tid, _), spec in victim.workers.items() for t in spec.tasks}
        affected = sorted({tid for tid, _ in moved})
        nimbus_log = cluster.directory / "nimbus.log"
        log_from, cpu_before = nimbus_log.stat().st_size, cpu_secs(pid)
        lost_at, lost_wall = time.monotonic(), time.time()
        victim.lose()

        def rewritten() -> float | None:
            """When nimbus wrote the last affected assignment away from the victim (mtime)."""
            times = []
            for tid in affected:
                data, stat = ios[-1].get(LAYOUT.assignment(tid))
                slots = decode(Assignment, data, tid).task_slots.values()
                if any(node == victim.id for node, _ in slots):
                    return None
                times.append(stat.mtime / 1000)
            return max(times)

        written = wait_for(rewritten, 300, "nimbus to reassign the lost tasks", interval=0.05)
        result["failover_nimbus_s"] = written - lost_wall
        result["failover_nimbus_cpu_s"] = cpu_secs(pid) - cpu_before  # beats' decoding too
        result["failover_topologies"] = len(affected)
        parts = wait_for(
            lambda: decision_parts(nimbus_log, log_from), 60, "nimbus to log its decision"
        )
        result.update(parts)

        def elsewhere() -> bool:
            held = {
                (tid, t)
                for s in sims
                if not s.lost
                for (tid, _), spec in s.workers.items()
                for t in spec.tasks
            }
            return moved <= held

        wait_for(elsewhere, 300, "the lost supervisor's workers to run elsewhere", interval=0.1)
        result["failover_s"] = time.monotonic() - lost_at  # their beats follow within 1 s
        stop.set()
        driver.join()
        for sim in sims[1:]:
            sim.lose()
        for io in ios:
            io.stop()
            io.close()
        return result


def main(argv: list[str]) -> None:
    for n in [int(a) for a in argv] or [100, 1000]:
        result = run(n)
        print(
            " ".join(
                f"{k}={v:.3f}" if isinstance(v, float) else f"{k}={v}" for k, v in result.items()
            ),
            flush=True,
        )


if __name__ == "__main__":
    main(sys.argv[1:])
