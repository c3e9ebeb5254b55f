"""Run a topology in this process, for your own unit tests: no ZooKeeper, no nimbus, no
worker processes (what Bytewax's `run_main` with TestingSource and TestingSink is to a
dataflow).

    from squall.testing import run

    result = run(WordCount, inputs={"lines": [["a b"], ["b"]]})
    assert sorted(result.values("split")) == [("a",), ("b",), ("b",)]

Every task runs as it would in a worker: the same executors and reliability machines, the
same groupings, ackers, and SparkBolts on a local SparkSession; only the deliveries go from
task to task in memory, on threads of this process. `inputs` replaces a spout by one that
emits the given tuples, each tracked, so `result.acked` and `result.failed` show what became
of them. `run` returns once every spout has run dry and every tuple was processed, or raises
RunTimeout at `timeout`. What it records is in run_recording.py, how it waits in run_waits.py.
"""

from __future__ import annotations

import tempfile
import time
from collections import defaultdict
from collections.abc import Iterable, Mapping, Sequence
from pathlib import Path
from typing import Any

from squall.components import Component, SparkBolt, Spout, TaskContext
from squall.config import cluster_conf
from squall.recipes.in_memory import InMemoryCoordination, InMemoryRegistry
from squall.run_recording import Recorder, RunResult, record_verdicts
from squall.run_waits import RunFailed, RunTimeout, not_ready, wait_until_done, wait_while
from squall.structure import ACKER, TopologyStructure, assign_task_ids
from squall.topology import Topology
from squall.tree_tracking import ACKERS_KEY, SPOUTS_TRACK_KEY, acker_executors, tree_trackers
from squall.validation import cap_parallelism
from squall.worker.executor_factory import make_executor
from squall.worker.executor_group import group_executors
from squall.worker.executors import Executor
from squall.worker.inbound import Inbound
from squall.worker.routing import Router
from squall.worker.spark import SparkHolder
from squall.worker.spout_executor import SpoutExecutor
from squall.worker.task_io import WorkerTaskIO

__all__ = ["RunFailed", "RunResult", "RunTimeout", "TestingSpout", "run"]


class TestingSpout(Spout):
    """Emits each of `items` (the values of one tuple on the default stream) once, tracked
    by its position, then runs dry. `run(inputs=...)` puts one in place of a spout; in a
    topology of your own, declare its fields: `TestingSpout.declaring("n").spec(items=...)`."""

    __test__ = False  # not a pytest test class

    def __init__(self, items: Iterable[Sequence[Any]] = ()) -> None:
        self.items = [list(values) for values in items]
        super().__init__(items=self.items)
        self.positions = list(range(len(self.items)))
        self.next = 0

    def initialize(self, conf: dict[str, Any], context: TaskContext) -> None:
        """Each task of a spout with par > 1 runs this: task i of n emits the items i, i+n,
        ..., so every item is emitted once whatever the parallelism of the replaced spout."""
        i, n = context.task_index, len(context.component_tasks)
        self.positions = list(range(i, len(self.items), n))

    @classmethod
    def declaring(cls, *fields: str) -> type[TestingSpout]:
        """A TestingSpout whose default stream has `fields` (a spout's fields are part of its
        class, as in every squall component)."""
        return type(f"TestingSpout_{'_'.join(fields)}", (cls,), {"outputs": list(fields)})

    def next_tuple(self) -> bool:
        if self.next == len(self.positions):
            return False
        position = self.positions[self.next]
        self.emit(self.items[position], msg_id=position)
        self.next += 1
        return True


def _check_inputs(topology: type[Topology], inputs: Mapping[str, Any]) -> None:
    specs = topology.specs
    unknown = sorted(set(inputs) - set(specs))
    if unknown:
        raise ValueError(f"inputs name {unknown}, which are not components of the topology")
    for name in inputs:
        if not issubclass(specs[name].component, Spout):
            raise ValueError(f"inputs can only replace spouts; {name!r} is a bolt")


def run(
    topology: type[Topology],
    inputs: Mapping[str, Iterable[Sequence[Any]]] | None = None,
    conf: Mapping[str, Any] | None = None,
    timeout: float = 60.0,
    output_dir: str | Path | None = None,
) -> RunResult:
    """Run `topology` until it is done and return what its components emitted.

    `inputs` maps spout names to the tuples a TestingSpout emits in their place; `conf`
    overrides the topology's own config (Storm's keys); SparkBolts use a local SparkSession
    unless `spark.master` says otherwise. Output files (sinks) go to `output_dir`, a fresh
    temporary directory by default."""
    inputs = dict(inputs or {})
    _check_inputs(topology, inputs)
    conf = cluster_conf(**{**topology.config, **(conf or {})})
    # as nimbus's submit does: Storm's cap on each component's parallelism
    structure: TopologyStructure = cap_parallelism(topology.structure(), conf)
    counts = structure.task_counts()
    ackers = 1 if conf[ACKERS_KEY] is None else conf[ACKERS_KEY]  # null: one (one process)
    if acker_executors(ackers, conf[SPOUTS_TRACK_KEY]):
        counts[ACKER] = ackers
    task_components = assign_task_ids(counts)
    by_component: dict[str, list[int]] = defaultdict(list)
    for task, name in sorted(task_components.items()):
        by_component[name].append(task)

    trackers = tree_trackers(conf, structure, task_components)
    result = RunResult(tree_trackers=sorted({task_components[t] for t in trackers}))
    executors: dict[int, Executor] = {}  # filled below; Inbound looks tasks up at delivery
    inbound = Inbound(structure, executors, conf["topology.backpressure.enable"])
    io = WorkerTaskIO(
        Router(structure, task_components, task_components),
        trackers,
        lambda component, _task, text: result.errors[component].append(text),
        send_many=inbound.deliver_many,
        congested=inbound.congested,
        deliver_local=inbound.deliver_local,
    )
    scratch = tempfile.TemporaryDirectory(prefix="squall-testing-")
    out = str(output_dir or Path(scratch.name) / "output")
    spark = SparkHolder(conf, "squall-testing", Path(scratch.name) / "spark-handoff")
    registry = InMemoryRegistry()
    for task, name in sorted(task_components.items()):
        context = TaskContext(
            "testing",
            name,
            task,
            tuple(by_component[name]),
            out,
            coordination=InMemoryCoordination(registry),
            task_components=task_components,
        )
        component = _instance(topology, name, inputs)
        executor = make_executor(structure, component, context, conf, io, spark)
        if component is not None:
            component.collector = Recorder(component.collector, name, executor, result)
        if isinstance(component, Spout):
            record_verdicts(component, name, result)
        executors[task] = executor
    group_executors(executors, structure, conf)  # tasks sharing one thread, as in a worker
    try:
        deadline = time.monotonic() + timeout
        for executor in executors.values():
            executor.start()
        # every task ready (a SparkBolt's session up) before any spout emits: readiness.py
        wait_while(
            executors,
            lambda: not all(e.stats.ready for e in executors.values()),
            deadline,
            lambda: f"tasks still starting: {not_ready(executors)}",
        )
        polls = {t: e.polls for t, e in executors.items() if isinstance(e, SpoutExecutor)}
        for executor in executors.values():
            executor.activate(True)
        # each spout's idle flag is news only once it polled while active: until then a run
        # could look finished before it began
        wait_while(
            executors,
            lambda: any(executors[t].polls == n for t, n in polls.items()),  # type: ignore[attr-defined]
            deadline,
            lambda: "the spouts had not started",
        )
        wait_until_done(executors, deadline, result)
    finally:
        for executor in executors.values():
            executor.stop()
        for executor in executors.values():
            executor.thread.join(30)
        if any(isinstance(e.component, SparkBolt) for e in executors.values()):
            spark.stop()
        scratch.cleanup()
    return result


def _instance(
    topology: type[Topology], name: str, inputs: Mapping[str, Iterable[Sequence[Any]]]
) -> Component | None:
    if name == ACKER:
        return None
    spec = topology.specs[name]
    if name in inputs:
        return TestingSpout(inputs[name])  # emits on the replaced spout's declared streams
    return spec.component(**spec.kwargs)
