"""One worker process: the tasks assigned to one (topology, supervisor, port) slot.

Started by a supervisor. This module is the process's life cycle only: it wires the parts
(ZooKeeperAgent for coordination and, security on, the topology's CURVE keys: without them
it exits, never falling back to plain ZeroMQ; Transport + WorkerTaskIO for sending, Inbound
for what arrives, executor_factory for the tasks), starts them, beats every
worker.heartbeat.frequency.secs (sooner while its spouts wait for the topology to be ready:
readiness.py) and asks the Watchdog whether every task is live, and stops them. Error
reports are throttled per task (ErrorReports) before they reach ZooKeeper. A task that
stalled or ended as fatal makes the worker report it and exit non-zero. What it does on what
ZooKeeper tells (activation, readiness, moves) is in zk_reactions.py.
"""

from __future__ import annotations

import argparse
import contextlib
import gc
import json
import logging
import os
import signal
import sys
import threading
import time
from pathlib import Path
from typing import Any

from squall import spark_connect as sc
from squall.cgroup_names import hierarchy
from squall.code_package import STRUCTURE_FILE
from squall.components import TaskContext
from squall.coordination import ZkCoordination
from squall.hot_path import describe as per_tuple_path
from squall.processes import WORKER_ORPHANED, WORKER_REASSIGNED
from squall.security.mode import security_on
from squall.security.topology_keys import TopologyKeysError
from squall.structure import TopologyStructure
from squall.tree_tracking import tree_trackers
from squall.zk import connection as zk_mod
from squall.zk.identity import component_conf

from . import lifecycle
from .bind_address import bind_address, loopback_surprise
from .credentials_watch import CredentialsWatch
from .error_reports import ErrorReports
from .executor_factory import load_executor
from .executor_group import group_executors
from .executors import Executor
from .inbound import Inbound
from .locality import locality_bounds
from .log_levels import LogLevels
from .orphan_cleanup import end_orphaned_children
from .profiler_actions import ProfilerActions
from .routing import Router
from .spark import SparkHolder
from .task_io import WorkerTaskIO
from .transport import Receiving, Transport, TransportSettings
from .watchdog import Watchdog
from .zk_agent import ZOOKEEPER_AWAY, ZooKeeperAgent
from .zk_reactions import ZooKeeperReactions

log = logging.getLogger("squall.worker")


class WorkerProcess(ZooKeeperReactions):
    def __init__(
        self, conf: dict[str, Any], tid: str, node: str, port: int, code_dir: Path, host: str
    ):
        self.conf = conf
        self.host = host  # the supervisor's registered host: the only address bound
        self.tid = tid
        self.slot = (node, port)
        self.code_dir = code_dir
        self.started = time.monotonic()
        self.supervisor_pid = os.getppid()  # it started this worker; watched in `run`
        self.stopping = threading.Event()
        self.zk = zk_mod.connect(conf, zk_mod.WORKER, tid)  # as its topology, nothing more
        self.layout = zk_mod.layout(conf)
        self.agent = ZooKeeperAgent(self.zk, self.layout, tid, self.slot)
        self.log_levels = LogLevels(self.zk, self.layout.logconfig(tid))
        self.profiling = ProfilerActions.of_worker(self, conf, tid, host)
        self.credentials = CredentialsWatch(
            self.zk, self.layout.usercredentials(tid), self.components_now
        )
        self.structure = TopologyStructure.from_json(
            json.loads((code_dir / STRUCTURE_FILE).read_text())
        )
        self.executors: dict[int, Executor] = {}
        self.inbound = Inbound(
            self.structure, self.executors, conf.get("topology.backpressure.enable", True)
        )
        self.exit_code = 0
        self.stepping = threading.Lock()
        self.my_tasks: tuple[int, ...] = ()
        self.errors = ErrorReports(conf, self._write_error)
        self.watchdog = Watchdog(
            self.executors,
            conf["topology.executor.stall.secs"],
            lambda component, task, text: self.errors.report(component, task, text, urgent=True),
        )

    def start(self) -> bool:
        assignment = self.agent.assignment()
        self.my_tasks = tuple(assignment.tasks_on(self.slot)) if assignment else ()
        if assignment is None or not self.my_tasks:  # taken away before it started
            self.exit_code = WORKER_REASSIGNED
            return False
        task_components = self.agent.task_components()
        self.life = lifecycle.begin(
            self.slot, assignment, self.conf["worker.heartbeat.frequency.secs"], task_components
        )
        keys = self.agent.topology_keys() if security_on(self.conf) else None
        address = bind_address(self.host)
        if loopback_surprise(self.host, address):
            log.warning(
                "host %s resolves to %s here: only this machine can reach this worker; "
                "set storm.local.hostname to an address other machines reach",
                self.host,
                address,
            )
        self.transport = Transport(
            TransportSettings.from_conf(self.conf, address, self.slot[1], keys),
            Receiving(
                self.inbound.deliver_many,
                self.inbound.fields_of,
                self.inbound.congested if self.inbound.backpressure else None,
                self.inbound.deliver_rows,
                self.inbound.load,
                self.inbound.deliver_protocol,
            ),
        )
        self.router = router = Router(
            self.structure, task_components, self.my_tasks, locality_bounds(self.conf)
        )
        router.load = self.transport.task_load
        self.react(lifecycle.AssignmentRead(assignment))  # routes to every task
        ackers = tree_trackers(self.conf, self.structure, task_components)
        io = WorkerTaskIO(
            router,
            ackers,
            self.errors.report,
            send_many=self.transport.send_many,
            deliver_local=self.inbound.deliver_local,
            congested=self.transport.congested,
        )
        handoff_dir = Path(self.conf["storm.local.dir"]).resolve() / "spark-handoff"
        self.spark = SparkHolder(
            self.conf,
            f"squall-{self.tid}-{self.slot[1]}",
            handoff_dir / f"{self.tid}-{self.slot[1]}",
            self.host,
            address,
            sc.server_dir(self.conf) if sc.uses_shared_server(self.conf) else None,
        )
        user_conf = component_conf(self.conf)  # the worker's ZooKeeper logins are not theirs
        for task in self.my_tasks:
            context = self._context(task, task_components)
            self.executors[task] = load_executor(
                self.structure, self.code_dir, context, user_conf, io, self.spark
            )
        groups = group_executors(self.executors, self.structure, self.conf)  # one thread
        if groups:  # which also receives and sends (Transport.share)
            [group] = groups
            self.transport.share(group.wake, group.thread)
            group.before_round.append(self.transport.drain)
            group.after_round.append(self.transport.pump)
            group.idle = self.transport.idle
        self.credentials.initial()  # before any component's initialize, as Storm does
        tune_garbage_collector(self.conf.get("topology.worker.gc.young.threshold"))
        self.transport.start()
        for executor in self.executors.values():
            executor.start()
        self.agent.watch(self._status_changed, self._assignment_changed)
        self.log_levels.start()
        self.profiling.start()
        self.credentials.start()
        return True

    def _context(self, task: int, task_components: dict[int, str]) -> TaskContext:
        # by default one folder per topology name, so an operator finds a topology's sink
        # files by its name (its id ends in "-<random>-<time>"; a resubmission reuses it)
        output_dir = self.conf["topology.output.dir"] or str(
            Path(self.conf["storm.local.dir"]).resolve() / "output" / self.tid.rsplit("-", 2)[0]
        )
        name = task_components[task]
        return TaskContext(
            self.tid,
            name,
            task,
            tuple(sorted(t for t, c in task_components.items() if c == name)),
            output_dir,
            coordination=ZkCoordination(self.zk, self.layout, task),
            task_components=dict(task_components),
        )

    def _restart(self) -> None:
        """Storm's JVM_RESTART: exit; the supervisor starts the worker again."""
        self.react(lifecycle.RestartAsked())

    def components_now(self) -> list[Any]:
        return [e.component for e in self.executors.values() if e.component is not None]

    # --- heartbeats and errors ---

    def beat(self) -> None:
        tasks = {t: e.stats.snapshot() for t, e in self.executors.items()}
        self.agent.beat(int(time.monotonic() - self.started), tasks)

    def _write_error(self, component: str, text: str) -> None:
        host = self.transport.addresses.get(self.my_tasks[0], ("", 0))[0]
        self.agent.report_error(component, text, host)

    # --- life cycle ---

    def run(self) -> None:
        wait = 0.0  # the first round at once: the other workers see this one's ready tasks
        while not self.stopping.wait(wait):
            if os.getppid() != self.supervisor_pid:
                # its supervisor died (kill -9): an orphan would hold its slot's tasks and its
                # ZooKeeper session with nobody to read its log, and the next supervisor on
                # this host kills it as a stray anyway
                self.react(lifecycle.SupervisorGone(self.supervisor_pid))
                break
            wait = self._zookeeper_round()
            reason = self.watchdog.check(time.monotonic())
            if reason is not None:
                self.react(lifecycle.Unhealthy(reason))

    def shutdown(self) -> None:
        for executor in self.executors.values():
            executor.stop()
        deadline = time.monotonic() + 5  # a stalled thread is a daemon: it is not waited for
        for executor in self.executors.values():
            if executor.thread.is_alive():
                executor.thread.join(max(deadline - time.monotonic(), 0))
        if self.executors:
            with contextlib.suppress(*ZOOKEEPER_AWAY):  # the last beat, if ZooKeeper is there
                self.beat()
            self.transport.close()
            self.spark.stop()
        with contextlib.suppress(*ZOOKEEPER_AWAY):  # why it exits, and what was held back
            self.errors.report_held_back()
            self.errors.write_pending()
        self.log_levels.close()
        self.profiling.close()
        self.credentials.close()
        self.agent.close()


def tune_garbage_collector(young: int | None) -> None:
    """Every tuple allocates a few containers (its Tuple, acking messages), so Python's
    collector runs a young collection every 700 allocations and, every 100 of those, walks
    everything the worker holds. With `young` set, what the worker built before its threads
    start (modules, the topology, executors and components before their initialize) moves
    out of the collector's sight (gc.freeze) and young collections wait for `young`
    allocations. Called before the transport's and the executors' threads start."""
    if young:
        gc.freeze()
        gc.set_threshold(young, *gc.get_threshold()[1:])


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="squall-worker")
    parser.add_argument("--conf", required=True)
    parser.add_argument("--topology-id", required=True)
    parser.add_argument("--supervisor-id", required=True)
    parser.add_argument("--port", type=int, required=True)
    parser.add_argument("--code-dir", required=True)
    parser.add_argument("--host", required=True, help="the supervisor's host: bound, not *")
    args = parser.parse_args(argv)
    conf = json.loads(Path(args.conf).read_text())
    # every tuple crosses threads of this process: short GIL hand-offs (conf/defaults.yaml)
    sys.setswitchinterval(conf.get("topology.worker.gil.switch.micros", 500) / 1e6)
    logging.basicConfig(
        level=logging.DEBUG if conf.get("topology.debug") else logging.INFO,
        format="%(asctime)s %(levelname)s %(name)s: %(message)s",
    )
    for noisy in ("kazoo", "py4j", "squall.kazoo"):
        logging.getLogger(noisy).setLevel(logging.WARNING)
    worker = WorkerProcess(
        conf, args.topology_id, args.supervisor_id, args.port, Path(args.code_dir), args.host
    )
    signal.signal(signal.SIGTERM, lambda *_: worker.stopping.set())
    signal.signal(signal.SIGINT, lambda *_: worker.stopping.set())
    try:
        if worker.start():
            log.info("worker %s:%d running tasks %s", args.topology_id, args.port, worker.my_tasks)
            log.info("per-tuple path %s", per_tuple_path())
            worker.run()  # its first round beats at once
    except TopologyKeysError as exc:
        log.error("cannot start securely (the supervisor will restart this worker): %s", exc)
        return 1
    finally:
        worker.shutdown()
        if worker.exit_code == WORKER_ORPHANED:  # nobody else will end what it forked
            end_orphaned_children(hierarchy(conf))
    return worker.exit_code
