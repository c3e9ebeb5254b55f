"""Nimbus's monitor round in one process, profiled (issue #15 item 4): a real ZooKeeper
holds N workers' beats (topologies of 50 workers, 2 tasks each, supervisors of 10 slots);
the round is exactly what nimbus/controller.py's monitor does, the reads through
nimbus/cluster_state.py and the decision through nimbus/core/decide.py's handle, timed in
process CPU seconds (kazoo's I/O thread included) and profiled with cProfile.

    .venv/bin/python bench/monitor_round.py 1000 5000 [--profile]
"""

from __future__ import annotations

import cProfile
import io
import pstats
import sys
import tempfile
import time
from pathlib import Path

from kazoo.client import KazooClient

from squall.config import load_defaults
from squall.nimbus.cluster_state import ClusterState
from squall.nimbus.core import events as ev
from squall.nimbus.core.decide import handle
from squall.nimbus.core.instructions import WriteAssignment
from squall.nimbus.core.model import NimbusModel, NimbusSettings, TopologyModel
from squall.records import Assignment, StormBase, SupervisorInfo, WorkerBeat, encode
from squall.structure import assign_task_ids
from squall.zk.layout import ZkLayout
from squall.zk.server import ZooKeeperServer

WORKERS_PER_TOPOLOGY, TASKS_PER_WORKER, SLOTS = 50, 2, 10
LAYOUT = ZkLayout("/squall")
TASK_STATS = {"emitted": {}, "transferred": {}, "executed": 0, "acked": 0, "failed": 0,
              "errors": 0, "pending": 0, "idle": True, "ready": True}  # fmt: skip


def populate(zk: KazooClient, n: int) -> NimbusModel:
    """Supervisors, assignments and one beat per worker in ZooKeeper; the leader's model."""
    settings = NimbusSettings.from_conf(load_defaults())
    sups = {f"sim{i:05d}": SupervisorInfo("127.0.0.1", list(range(6700, 6700 + SLOTS)), 0)
            for i in range(-(-n // SLOTS))}  # fmt: skip
    for sid, info in sups.items():
        zk.create(LAYOUT.supervisor(sid), encode(info), makepath=True)
    slots = [(sid, port) for sid in sups for port in range(6700, 6700 + SLOTS)]
    topologies = {}
    per = WORKERS_PER_TOPOLOGY * TASKS_PER_WORKER
    for i in range(n // WORKERS_PER_TOPOLOGY):
        tid = f"cp{i}-00000000-0"
        mine = slots[i * WORKERS_PER_TOPOLOGY : (i + 1) * WORKERS_PER_TOPOLOGY]
        placement = {t: mine[(t - 1) % len(mine)] for t in range(1, per + 1)}
        base = StormBase(tid, "active", 0, WORKERS_PER_TOPOLOGY,
                         {"source": per // 2, "sink": per // 2})  # fmt: skip
        tasks = assign_task_ids(base.component_executors)
        assignment = Assignment(1, tid, {s: "127.0.0.1" for s, _ in mine}, placement,
                                {t: 0 for t in placement})  # fmt: skip
        topologies[tid] = TopologyModel(tid, base, tasks, assignment, assigned_at={})
        for sid, port in mine:
            tasks_here = {t: TASK_STATS for t, s in placement.items() if s == (sid, port)}
            beat = WorkerBeat(1, int(time.time()), 1, tasks_here)
            zk.create(LAYOUT.taskbeat(tid, sid, port), encode(beat), makepath=True)
    return NimbusModel(settings, topologies, sups, epoch=1, leading=True)


def one_round(state: ClusterState, model: NimbusModel, now: float) -> NimbusModel:
    """controller.monitor's reads, then the decision on them."""
    beats = {tid: state.read_beats(tid) for tid in model.topologies}
    event = ev.MonitorTick(now, time.time(), state.read_supervisors(), beats)
    model, out = handle(model, event)
    assert not out, f"a steady round decided {out[:2]}"
    return model


def run(n: int, profile: bool) -> None:
    with tempfile.TemporaryDirectory() as tmp:
        server = ZooKeeperServer(Path(tmp)).start()
        zk = KazooClient(hosts=server.hosts, timeout=20)
        try:
            zk.start()
            model = populate(zk, n)
            state = ClusterState(zk, LAYOUT)
            model = one_round(state, model, 100.0)  # warm
            cpu, wall = time.process_time(), time.perf_counter()
            rounds = 3
            for r in range(rounds):
                model = one_round(state, model, 101.0 + r)
            cpu, wall = (time.process_time() - cpu) / rounds, (time.perf_counter() - wall) / rounds
            print(f"N={n}: monitor round {cpu:.3f} s CPU, {wall:.3f} s wall", flush=True)
            lost = dict(model.supervisors)
            lost.pop(min(lost))
            cpu = time.process_time()
            _, out = handle(model, ev.SupervisorsChanged(120.0, time.time(), lost, {}))
            cpu = time.process_time() - cpu
            moved = sum(isinstance(i, WriteAssignment) for i in out)
            print(f"N={n}: a lost supervisor decided in {cpu:.3f} s CPU ({moved} moved)")
            if profile:
                prof = cProfile.Profile()
                prof.enable()
                one_round(state, model, 110.0)
                prof.disable()
                text = io.StringIO()
                pstats.Stats(prof, stream=text).sort_stats("cumulative").print_stats(30)
                print(text.getvalue())
        finally:
            zk.stop()
            zk.close()
            server.stop()


if __name__ == "__main__":
    args = [a for a in sys.argv[1:] if not a.startswith("--")]
    for size in [int(a) for a in args] or [1000, 5000]:
        run(size, "--profile" in sys.argv)
