"""One worker process: the tasks assigned to one (topology, supervisor, port) slot.

Started by a supervisor. It loads the topology's code from the supervisor's copy, runs an
executor per task, moves tuples with the Transport, writes one heartbeat per worker to
/taskbeats, and follows /storms (spouts run only while the topology is active) and
/assignments (routing follows moves of other tasks; if its own tasks change or the topology
goes away, it exits and the supervisor starts what is wanted now).
"""

from __future__ import annotations

import argparse
import contextlib
import importlib
import json
import logging
import signal
import sys
import threading
import time
from pathlib import Path
from typing import Any

from kazoo.exceptions import BadVersionError, NodeExistsError, NoNodeError

from squall import zk as zk_mod
from squall.code_package import STRUCTURE_FILE
from squall.components import Batch, TaskContext, Tuple
from squall.coordination import ZkCoordination
from squall.records import Assignment, StormBase, WorkerBeat, decode, encode
from squall.structure import TopologyStructure

from .acking import ACKER, SYSTEM_STREAMS
from .codec import BatchDelivery, Delivery
from .executors import AckerExecutor, Executor, SparkBoltExecutor, executor_class
from .routing import Router
from .spark import SparkHolder
from .transport import Transport

log = logging.getLogger("squall.worker")
MAX_ERRORS_KEPT = 10


def load_component(code_dir: Path, module_name: str, class_name: str, kwargs: dict) -> Any:
    code = str(code_dir / "code")
    if code not in sys.path:
        sys.path.insert(0, code)
    obj: Any = importlib.import_module(module_name)
    for part in class_name.split("."):
        obj = getattr(obj, part)
    return obj(**kwargs)


class Worker:
    def __init__(self, conf: dict[str, Any], tid: str, node: str, port: int, code_dir: Path):
        self.conf = conf
        self.tid = tid
        self.slot = (node, port)
        self.code_dir = code_dir
        self.started = time.monotonic()
        self.stopping = threading.Event()
        self.zk = zk_mod.connect(conf)
        self.layout = zk_mod.layout(conf)
        self.structure = TopologyStructure.from_json(
            json.loads((code_dir / STRUCTURE_FILE).read_text())
        )
        self.executors: dict[int, Executor] = {}
        self.seq = 0

    # --- set-up ---

    def _task_components(self) -> dict[int, str]:
        parent = self.layout.tasks(self.tid)
        return {
            int(child): self.zk.get(f"{parent}/{child}")[0].decode()
            for child in zk_mod.children(self.zk, parent)
        }

    def start(self) -> bool:
        assignment = zk_mod.read_record(self.zk, Assignment, self.layout.assignment(self.tid))
        if assignment is None:
            return False
        self.my_tasks = tuple(assignment.tasks_on(self.slot))
        if not self.my_tasks:
            return False
        task_components = self._task_components()
        self.router = Router(self.structure, task_components, self.my_tasks)
        self.ackers = sorted(t for t, c in task_components.items() if c == ACKER)
        self.transport = Transport(self.slot[1], self._deliver, self._fields_of)
        self._route(assignment)
        output_dir = self.conf["topology.output.dir"] or str(
            Path(self.conf["storm.local.dir"]).resolve() / "output"
        )
        handoff_dir = Path(self.conf["storm.local.dir"]).resolve() / "spark-handoff"
        self.spark = SparkHolder(
            self.conf,
            f"squall-{self.tid}-{self.slot[1]}",
            handoff_dir / f"{self.tid}-{self.slot[1]}",
        )
        by_component: dict[str, list[int]] = {}
        for task, component in sorted(task_components.items()):
            by_component.setdefault(component, []).append(task)
        for task in self.my_tasks:
            name = task_components[task]
            context = TaskContext(
                self.tid,
                name,
                task,
                tuple(by_component[name]),
                output_dir,
                coordination=ZkCoordination(self.zk, self.layout, task),
            )
            self.executors[task] = self._executor(name, context)
        self.transport.start()
        for executor in self.executors.values():
            executor.start()
        self.zk.DataWatch(self.layout.storm(self.tid))(self._storm_changed)
        self.zk.DataWatch(self.layout.assignment(self.tid))(self._assignment_changed)
        return True

    def _executor(self, name: str, context: TaskContext) -> Executor:
        if name == ACKER:
            return AckerExecutor(None, context, {}, self.conf, self)
        info = self.structure.components[name]
        conf = {**self.conf, **info.conf}
        component = load_component(self.code_dir, info.module_name, info.class_name, info.kwargs)
        cls = executor_class(component)
        if cls is SparkBoltExecutor:
            inputs = {
                (i.component, i.stream): self.structure.components[i.component].streams[i.stream]
                for i in info.inputs
            }
            return cls(
                component, context, info.streams, conf, self, spark=self.spark, input_fields=inputs
            )
        return cls(component, context, info.streams, conf, self)

    # --- TaskIO: what executors use ---

    def targets(
        self, component: str, task: int, stream: str, values: list[Any], direct: int | None
    ) -> list[int]:
        return self.router.targets(component, task, stream, values, direct)

    def split(
        self, component: str, task: int, stream: str, table: Any, direct: int | None
    ) -> list[tuple[int, Any]]:
        return self.router.split(component, task, stream, table, direct)

    def send(self, target: int, delivery: Delivery) -> None:
        self.transport.send(target, delivery)

    def acker_for(self, root: int) -> int | None:
        return self.ackers[root % len(self.ackers)] if self.ackers else None

    # --- tuples arriving ---

    def _fields_of(self, component: str, stream: str) -> tuple[str, ...]:
        if stream in SYSTEM_STREAMS:
            return SYSTEM_STREAMS[stream]
        return self.structure.components[component].streams[stream]

    def _deliver(self, message: Delivery) -> None:
        if isinstance(message, BatchDelivery):
            self._deliver_batch(message)
            return
        target, component, task, stream, values, roots, ids = message
        found = self._receiver(target, component, stream)
        if found is not None:
            executor, fields = found
            ids_map = dict(zip(roots, ids, strict=False))
            executor.inbox.put(Tuple(component, task, stream, fields, tuple(values), ids_map))

    def _deliver_batch(self, batch: BatchDelivery) -> None:
        if batch.stream in SYSTEM_STREAMS:
            log.warning("batch on system stream %s; dropped", batch.stream)
            return
        found = self._receiver(batch.target, batch.component, batch.stream)
        if found is None:
            return
        executor, fields = found
        if tuple(batch.table.column_names) != fields:
            log.warning(
                "batch on %s/%s with columns %s; dropped",
                batch.component,
                batch.stream,
                batch.table.column_names,
            )
            return
        ids_map = dict(zip(batch.roots, batch.ids, strict=False))
        executor.inbox.put(
            Batch(batch.component, batch.task, batch.stream, fields, batch.table, ids_map)
        )

    def _receiver(
        self, target: int, component: str, stream: str
    ) -> tuple[Executor, tuple[str, ...]] | None:
        """The executor of `target` and the stream's fields, or None (logged) for a delivery
        this worker cannot take: a task it does not run, a stream the topology lacks."""
        executor = self.executors.get(target)
        if executor is None:
            log.warning("tuple for task %s, which this worker does not run; dropped", target)
            return None
        try:
            return executor, self._fields_of(component, stream)
        except KeyError:
            log.warning("tuple on unknown stream %s/%s; dropped", component, stream)
            return None

    # --- watches ---

    def _storm_changed(self, data: bytes | None, _stat: Any, _event: Any = None) -> bool | None:
        if data is None:
            self.stopping.set()
            return False
        try:
            base = decode(StormBase, data, self.layout.storm(self.tid))
        except ValueError:
            return None
        for executor in self.executors.values():
            if base.status == "active":
                executor.active.set()
            else:
                executor.active.clear()
        return None

    def _route(self, assignment: Assignment) -> None:
        addresses = {
            task: (assignment.node_host.get(slot[0], slot[0]), slot[1])
            for task, slot in assignment.task_slots.items()
        }
        self.transport.route(addresses, set(self.my_tasks))

    def _assignment_changed(self, data: bytes | None, _stat: Any, _event: Any = None):
        if data is None:
            self.stopping.set()
            return False
        try:
            assignment = decode(Assignment, data, self.layout.assignment(self.tid))
        except ValueError:
            return None
        if tuple(assignment.tasks_on(self.slot)) != self.my_tasks:
            log.info("this worker's tasks changed; exiting so the supervisor restarts it")
            self.stopping.set()
            return False
        self._route(assignment)
        return None

    # --- heartbeats and errors ---

    def beat(self) -> None:
        self.seq += 1
        beat = WorkerBeat(
            seq=self.seq,
            time_secs=int(time.time()),
            uptime_secs=int(time.monotonic() - self.started),
            tasks={t: e.stats.snapshot() for t, e in self.executors.items()},
        )
        path = self.layout.taskbeat(self.tid, *self.slot)
        try:
            self.zk.set(path, encode(beat))
        except NoNodeError:
            # NoNode on create: the topology was removed; the storm watch stops us.
            with contextlib.suppress(NodeExistsError, NoNodeError):
                self.zk.create(path, encode(beat))

    def report_error(self, component: str, text: str) -> None:
        path = f"{self.layout.errors(self.tid)}/{component}"
        entry = {
            "error": text[-4000:],
            "time_secs": int(time.time()),
            "host": self.transport.addresses.get(self.my_tasks[0], ("", 0))[0],
            "port": self.slot[1],
        }
        for _ in range(5):
            try:
                data, stat = self.zk.get(path)
                errors = (json.loads(data or b"[]") + [entry])[-MAX_ERRORS_KEPT:]
                self.zk.set(path, json.dumps(errors).encode(), version=stat.version)
                return
            except NoNodeError:
                try:
                    self.zk.create(path, json.dumps([entry]).encode(), makepath=True)
                    return
                except NodeExistsError:
                    continue
            except (BadVersionError, ValueError):
                continue

    # --- life cycle ---

    def run(self) -> None:
        period = self.conf["worker.heartbeat.frequency.secs"]
        while not self.stopping.wait(period):
            self.beat()

    def shutdown(self) -> None:
        for executor in self.executors.values():
            executor.stop()
        for executor in self.executors.values():
            executor.thread.join(5)
        if self.executors:
            self.beat()
            self.transport.close()
            self.spark.stop()
        self.zk.stop()
        self.zk.close()


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="squall-worker")
    parser.add_argument("--conf", required=True)
    parser.add_argument("--topology-id", required=True)
    parser.add_argument("--supervisor-id", required=True)
    parser.add_argument("--port", type=int, required=True)
    parser.add_argument("--code-dir", required=True)
    args = parser.parse_args(argv)
    conf = json.loads(Path(args.conf).read_text())
    logging.basicConfig(
        level=logging.DEBUG if conf.get("topology.debug") else logging.INFO,
        format="%(asctime)s %(levelname)s %(name)s: %(message)s",
    )
    for noisy in ("kazoo", "py4j", "squall.kazoo"):
        logging.getLogger(noisy).setLevel(logging.WARNING)
    worker = Worker(conf, args.topology_id, args.supervisor_id, args.port, Path(args.code_dir))
    signal.signal(signal.SIGTERM, lambda *_: worker.stopping.set())
    signal.signal(signal.SIGINT, lambda *_: worker.stopping.set())
    try:
        if worker.start():
            log.info("worker %s:%d running tasks %s", args.topology_id, args.port, worker.my_tasks)
            worker.beat()
            worker.run()
    finally:
        worker.shutdown()
    return 0
