"""Seconds from SIGKILL to every task heartbeating again, for a worker, a supervisor host
(the supervisor and its workers, as when a machine dies) and the nimbus leader.

"Heartbeating again" means: every task of the current assignment is covered by a beat from
its assigned slot that changed after the kill, and a slot whose worker was killed beats from
a new process (its uptime is shorter than the time since the kill). Between cases the
cluster settles for a few beats. For
the nimbus leader, the clock also waits for the standby to lead and answer.

Target: at most the ZooKeeper session timeout + 5 s. Then, on a cluster of its own, what a
lost host costs the rest of a topology: the output gap and the surviving workers restarted
(bench/host_loss_output.py says how). Run: .venv/bin/python bench/recovery.py
"""

from __future__ import annotations

import os
import platform
import signal
import tempfile
import time
from pathlib import Path

from host_loss_output import measure as measure_host_loss
from host_loss_output import report as host_loss_report
from kazoo.client import KazooClient

from squall.local import LocalCluster, wait_for
from squall.records import Assignment, WorkerBeat, decode
from squall.submit import submit_file

TINY = Path(__file__).parents[1] / "tests" / "integration" / "topologies" / "tiny.py"
SESSION_MS = 6000


def beats(zk: KazooClient, tid: str) -> dict[tuple[str, int], WorkerBeat]:
    out = {}
    for child in zk.get_children(f"/squall/taskbeats/{tid}"):
        node, _, port = child.rpartition("-")
        out[(node, int(port))] = decode(
            WorkerBeat, zk.get(f"/squall/taskbeats/{tid}/{child}")[0], child
        )
    return out


def recovered(zk: KazooClient, tid: str, before: dict, killed: set, since: float) -> bool:
    assignment = decode(Assignment, zk.get(f"/squall/assignments/{tid}")[0], tid)
    now = beats(zk, tid)
    for task, slot in assignment.task_slots.items():
        beat = now.get(slot)
        if beat is None or task not in beat.tasks:
            return False
        if slot in before and beat.seq == before[slot].seq:
            return False  # not a single beat since the kill
        if slot in killed and beat.uptime_secs > time.monotonic() - since:
            return False  # the beat is not from a process started after the kill
    return True


def current_slots(zk: KazooClient, tid: str) -> set[tuple[str, int]]:
    return decode(Assignment, zk.get(f"/squall/assignments/{tid}")[0], tid).slots()


def measure(zk, tid, kill) -> float:
    settled = {k: b for k, b in beats(zk, tid).items() if k in current_slots(zk, tid)}
    wait_for(
        lambda: all(b.seq >= settled[k].seq + 3 for k, b in beats(zk, tid).items() if k in settled),
        60,
        "the cluster to settle",
    )
    before = beats(zk, tid)
    start = time.monotonic()
    killed = kill()
    wait_for(lambda: recovered(zk, tid, before, killed, start), 120, "recovery", interval=0.1)
    return time.monotonic() - start


def main() -> None:
    conf = {"storm.zookeeper.session.timeout": SESSION_MS, "supervisor.monitor.frequency.secs": 1}
    with (
        tempfile.TemporaryDirectory(prefix="squall-recovery-") as tmp,
        LocalCluster(Path(tmp), supervisors=3, nimbuses=2, conf=conf) as cluster,
    ):
        with cluster.client() as client:
            submit_file(client, TINY, cluster.client_conf(), name="recovery")
            tid = next(t.id for t in client.getClusterInfo().topologies)
        zk = cluster.zk_client("nimbus")
        wait_for(lambda: recovered(zk, tid, {}, set(), time.monotonic()), 120, "start")

        def slot_pid(slot):
            path = cluster.directory / slot[0] / "supervisor" / "workers" / f"{tid}-{slot[1]}.pid"
            return int(path.read_text())

        def kill_worker():
            slot = sorted(decode(Assignment, zk.get(f"/squall/assignments/{tid}")[0], tid).slots())[
                0
            ]
            os.kill(slot_pid(slot), signal.SIGKILL)
            return {slot}

        def kill_host():
            assignment = decode(Assignment, zk.get(f"/squall/assignments/{tid}")[0], tid)
            host = sorted(assignment.slots())[0][0]
            cluster.processes.pop(host).kill()
            slots = {s for s in assignment.slots() if s[0] == host}
            for slot in slots:
                os.kill(slot_pid(slot), signal.SIGKILL)
            return slots

        def kill_leader():
            _, port = cluster.leader()
            name = cluster.nimbus_name(cluster.nimbus_ports.index(port) + 1)
            cluster.processes.pop(name).kill()
            wait_for(lambda: cluster.leader()[1] != port, 120, "a new leader", interval=0.1)
            return set()

        results = [
            ("worker", measure(zk, tid, kill_worker)),
            ("supervisor host", measure(zk, tid, kill_host)),
            ("nimbus leader", measure(zk, tid, kill_leader)),
        ]
        zk.stop()
        zk.close()
    with tempfile.TemporaryDirectory(prefix="squall-host-loss-") as tmp:
        host_loss = measure_host_loss(Path(tmp))
    target = SESSION_MS / 1000 + 5
    print(f"# {platform.machine()}, {os.cpu_count()} cores, ZooKeeper session {SESSION_MS} ms")
    for what, secs in results:
        verdict = "met" if secs <= target else "MISSED"
        print(f"{what:>16}: {secs:5.1f} s  (target <= {target:.0f} s: {verdict})")
    print(host_loss_report(host_loss))


if __name__ == "__main__":
    main()
