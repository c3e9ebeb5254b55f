"""A topology's tasks run as executors in this process, deliveries going from task to task in
memory instead of over a transport: what `squall.testing.run` runs, and its one entry point
into the worker (tests/unit/test_layers.py).

Every task runs as it would in a worker: the same executors and reliability machines, the
same groupings, ackers, and SparkBolts on a local SparkSession, on threads of this process.
What a run records is in run_recording.py, how it waits in run_waits.py.
"""

from __future__ import annotations

import tempfile
import time
from collections import defaultdict
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from squall.components import Component, SparkBolt, Spout, TaskContext
from squall.recipes.in_memory import InMemoryCoordination, InMemoryRegistry
from squall.run_result import RunResult
from squall.structure import ACKER, TopologyStructure, assign_task_ids
from squall.tree_tracking import ACKERS_KEY, SPOUTS_TRACK_KEY, acker_executors, tree_trackers
from squall.worker.executor_factory import make_executor
from squall.worker.executor_group import group_executors
from squall.worker.executors import Executor
from squall.worker.inbound import Inbound
from squall.worker.routing import Router
from squall.worker.run_recording import EmitRecorder, record_verdicts
from squall.worker.run_waits import not_ready, wait_until_done, wait_while
from squall.worker.spark import SparkHolder
from squall.worker.spout_executor import SpoutExecutor
from squall.worker.task_io import WorkerTaskIO


@dataclass(frozen=True)
class LocalTasks:
    """A topology's tasks built as executors of this process, grouped on threads as a worker
    groups them, not yet started."""

    executors: dict[int, Executor]
    components: dict[int, str]  # task -> its component
    trackers: tuple[int, ...]  # the tasks that track tuple trees (spouts, or __acker)


def build_tasks(
    structure: TopologyStructure,
    conf: dict[str, Any],
    instance: Callable[[str], Component | None],
    output_dir: str,
    spark: SparkHolder,
    report_error: Callable[[str, int, str], None],
    made: Callable[[str, Component | None, Executor], None] | None = None,
) -> LocalTasks:
    """Every task of `structure` and its ackers (topology.acker.executors, null: one) as an
    executor whose deliveries go from task to task in memory. `instance(component)` makes
    each task's component (None for an acker); `made` sees each executor as it is made.
    Also what bench/pertuple_inprocess.py measures the per-tuple path with."""
    counts = structure.task_counts()
    ackers = 1 if conf[ACKERS_KEY] is None else conf[ACKERS_KEY]  # null: one (one process)
    if acker_executors(ackers, conf[SPOUTS_TRACK_KEY]):
        counts[ACKER] = ackers
    task_components = assign_task_ids(counts)
    by_component: dict[str, list[int]] = defaultdict(list)
    for task, name in sorted(task_components.items()):
        by_component[name].append(task)

    trackers = tree_trackers(conf, structure, task_components)
    executors: dict[int, Executor] = {}  # filled below; Inbound looks tasks up at delivery
    inbound = Inbound(structure, executors, conf["topology.backpressure.enable"])
    io = WorkerTaskIO(
        Router(structure, task_components, task_components),
        trackers,
        report_error,
        send_many=inbound.deliver_many,
        congested=inbound.congested,
        deliver_local=inbound.deliver_local,
    )
    registry = InMemoryRegistry()
    for task, name in sorted(task_components.items()):
        context = TaskContext(
            "testing",
            name,
            task,
            tuple(by_component[name]),
            output_dir,
            coordination=InMemoryCoordination(registry),
            task_components=task_components,
        )
        component = instance(name)
        executor = make_executor(structure, component, context, conf, io, spark)
        if made is not None:
            made(name, component, executor)
        executors[task] = executor
    group_executors(executors, structure, conf)  # tasks sharing one thread, as in a worker
    return LocalTasks(executors, task_components, tuple(trackers))


def run_tasks(
    structure: TopologyStructure,
    conf: dict[str, Any],
    instance: Callable[[str], Component | None],
    timeout: float,
    output_dir: str | Path | None,
) -> RunResult:
    """Run every task of `structure` (and its ackers) until the spouts have run dry and every
    tuple was processed; RunTimeout at `timeout` seconds, RunFailed when a task cannot
    start. `instance(component)` makes each task's component (None for an acker); output
    files go to `output_dir`, a fresh temporary directory when None."""
    result = RunResult()

    def record(name: str, component: Component | None, executor: Executor) -> None:
        if component is not None:
            component.collector = EmitRecorder(component.collector, name, executor, result)
        if isinstance(component, Spout):
            record_verdicts(component, name, result)

    scratch = tempfile.TemporaryDirectory(prefix="squall-testing-")
    out = str(output_dir or Path(scratch.name) / "output")
    spark = SparkHolder(conf, "squall-testing", Path(scratch.name) / "spark-handoff")
    tasks = build_tasks(
        structure,
        conf,
        instance,
        out,
        spark,
        lambda component, _task, text: result.errors[component].append(text),
        record,
    )
    result.tree_trackers = sorted({tasks.components[t] for t in tasks.trackers})
    executors = tasks.executors
    try:
        _run(executors, time.monotonic() + timeout, result)
    finally:
        for executor in executors.values():
            executor.stop()
        for executor in executors.values():
            executor.thread.join(30)
        if any(isinstance(e.component, SparkBolt) for e in executors.values()):
            spark.stop()
        scratch.cleanup()
    return result


def _run(executors: dict[int, Executor], deadline: float, result: RunResult) -> None:
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
