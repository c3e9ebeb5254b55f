"""What a lost host costs the rest of a topology (issue 38 item 2): the output gap and the
workers restarted when one of two hosts dies with its worker.

Two supervisors as two hosts (loopback addresses of their own), two slots each; gated.py
(tests/integration/topologies) with one __acker, so its seven tasks sit 4 and 3 on two
workers, one per host, and tracked trees unbounded (max.spout.pending) so that trees lost
with the host never stall the surviving spout. A feeder raises the gate steadily. The host
holding 4 tasks is killed (its supervisor and its worker, SIGKILL). Figures:

- output gap: the longest stretch, from the kill until every task runs again plus 5 s, in
  which no sink file grew (the whole topology's output stopped);
- moved sinks back: seconds from the kill until every sink task that was on the lost host
  wrote again;
- restarted: workers on the surviving host whose process changed (pid or start time).

Run: .venv/bin/python bench/host_loss_output.py (called by bench/recovery.py too)."""

from __future__ import annotations

import os
import signal
import tempfile
import threading
import time
from dataclasses import dataclass
from pathlib import Path

from squall.local import LocalCluster, topology_id, wait_for
from squall.records import Assignment, decode
from squall.submit import submit_file

GATED = Path(__file__).parents[1] / "tests" / "integration" / "topologies" / "gated.py"
HOSTS = ["127.0.0.6", "127.0.0.7"]
RATE = 1000  # numbers a second let through the gate
POLL = 0.05  # seconds between looks at the sink's files
SETTLE = 5.0  # seconds watched after every task runs again


@dataclass(frozen=True)
class HostLoss:
    output_gap: float
    moved_back: float
    recovered: float
    restarted: int
    survivors: int


def _assignment(cluster: LocalCluster, tid: str) -> Assignment:
    zk = cluster.zk_client("nimbus")
    try:
        return decode(Assignment, zk.get(f"/squall/assignments/{tid}")[0], tid)
    finally:
        zk.stop()
        zk.close()


def _start_time(pid: int) -> str | None:
    try:
        return Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[19]
    except OSError:
        return None


def _workers(cluster: LocalCluster, tid: str, node: str) -> dict[str, tuple[int, str | None]]:
    """The topology's workers on `node`: pid file -> (pid, start time)."""
    found = {}
    for pid_file in (cluster.directory / node / "supervisor" / "workers").glob(f"{tid}-*.pid"):
        pid = int(pid_file.read_text())
        found[pid_file.name] = (pid, _start_time(pid))
    return found


def _sizes(out: Path) -> dict[int, int]:
    sizes = {}
    for path in out.glob("sink-*.jsonl"):
        try:
            sizes[int(path.stem.split("-")[1])] = path.stat().st_size
        except OSError:
            continue
    return sizes


def _running(cluster: LocalCluster, tid: str) -> bool:
    with cluster.client() as client:
        return all(e.stats is not None for e in client.getTopologyInfo(tid).executors)


def measure(directory: Path) -> HostLoss:
    conf = {"storm.zookeeper.session.timeout": 6000, "supervisor.monitor.frequency.secs": 1}
    gate, out = directory / "gate", directory / "out"
    gate.write_text("0")
    os.environ["SQUALL_TEST_GATE"] = str(gate)
    with LocalCluster(
        directory / "cluster",
        supervisors=2,
        slots_per_supervisor=2,
        supervisor_hosts=HOSTS,
        conf=conf,
    ) as cluster:
        overrides = {
            "topology.output.dir": str(out),
            "topology.spouts.track.trees": False,
            "topology.acker.executors": 1,
            "topology.max.spout.pending": 10_000_000,
        }
        with cluster.client() as client:
            name = submit_file(client, GATED, cluster.client_conf(), overrides=overrides)
            tid = topology_id(client, name)
        assert tid is not None
        wait_for(lambda: _running(cluster, tid), 120, "every executor running")
        placed = _assignment(cluster, tid)
        on: dict[tuple[str, int], set[int]] = {}
        for task, slot in placed.task_slots.items():
            on.setdefault(slot, set()).add(task)
        lost = max(on, key=lambda slot: len(on[slot]))
        kept_node = next(node for node, _ in on if node != lost[0])
        stop = threading.Event()

        def feed() -> None:
            limit, began = 0, time.monotonic()
            while not stop.wait(0.05):
                limit = int((time.monotonic() - began) * RATE)
                gate.write_text(str(limit))

        feeder = threading.Thread(target=feed, daemon=True)
        feeder.start()
        try:
            wait_for(lambda: len(_sizes(out)) == 4, 60, "every sink task writing")
            survivors = _workers(cluster, tid, kept_node)
            moved_sinks = {t for t in _sizes(out) if t in on[lost]}
            pid_file = cluster.directory / lost[0] / "supervisor" / "workers"
            lost_pid = int((pid_file / f"{tid}-{lost[1]}.pid").read_text())
            sizes = _sizes(out)
            start = last_growth = time.monotonic()
            supervisor = cluster.processes.pop(lost[0])
            supervisor.kill()
            os.kill(lost_pid, signal.SIGKILL)
            supervisor.wait()
            gap = moved_back = 0.0
            recovered: float | None = None
            while True:
                time.sleep(POLL)
                now, seen = time.monotonic(), _sizes(out)
                if any(seen.get(t, 0) > sizes.get(t, 0) for t in seen):
                    gap = max(gap, now - last_growth)
                    last_growth = now
                if not moved_back and all(seen.get(t, 0) > sizes[t] for t in moved_sinks):
                    moved_back = now - start
                if recovered is None and moved_back and _running(cluster, tid):
                    recovered = now - start
                sizes = seen
                if recovered is not None and now - start > recovered + SETTLE:
                    break
                if now - start > 180:
                    raise TimeoutError("the topology did not recover in 180 s")
            gap = max(gap, time.monotonic() - last_growth)
            assert recovered is not None
            after = _workers(cluster, tid, kept_node)
        finally:
            stop.set()
            feeder.join()
        restarted = sum(1 for name, worker in survivors.items() if after.get(name) != worker)
        return HostLoss(gap, moved_back, recovered, restarted, len(survivors))


def report(result: HostLoss) -> str:
    return (
        f"host lost, output: gap {result.output_gap:4.1f} s, moved sinks back "
        f"{result.moved_back:4.1f} s, every task running {result.recovered:4.1f} s, "
        f"{result.restarted} of {result.survivors} surviving workers restarted"
    )


def main() -> None:
    with tempfile.TemporaryDirectory(prefix="squall-host-loss-") as tmp:
        print(f"# {os.cpu_count()} cores, load {os.getloadavg()[0]:.1f}, {RATE} numbers/s")
        print(report(measure(Path(tmp))))


if __name__ == "__main__":
    main()
