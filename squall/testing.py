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
RunTimeout at `timeout`.
"""

from __future__ import annotations

import tempfile
import threading
import time
from collections import defaultdict
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from squall.components import Component, SparkBolt, Spout, TaskContext
from squall.config import cluster_conf
from squall.recipes.in_memory import InMemoryCoordination, InMemoryRegistry
from squall.structure import ACKER, TopologyStructure, assign_task_ids
from squall.thrift_api import DEFAULT_STREAM
from squall.topology import Topology
from squall.worker.executor_factory import make_executor
from squall.worker.executors import Executor
from squall.worker.inbound import Inbound
from squall.worker.routing import Router
from squall.worker.spark import SparkHolder
from squall.worker.spout_executor import SpoutExecutor
from squall.worker.tables import as_table
from squall.worker.task_io import WorkerTaskIO


class RunTimeout(TimeoutError):
    """The topology was still working when `run`'s timeout passed."""


class RunFailed(RuntimeError):
    """A task could not start (its initialize raised, or its SparkSession failed)."""


class TestingSpout(Spout):
    """Emits each of `items` (the values of one tuple on the default stream) once, tracked
    by its position, then runs dry. `run(inputs=...)` puts one in place of a spout; in a
    topology of your own, declare its fields: `TestingSpout.declaring("n").spec(items=...)`."""

    __test__ = False  # not a pytest test class

    def __init__(self, items: Iterable[Sequence[Any]] = ()) -> None:
        self.items = [list(values) for values in items]
        super().__init__(items=self.items)
        self.next = 0

    @classmethod
    def declaring(cls, *fields: str) -> type[TestingSpout]:
        """A TestingSpout whose default stream has `fields` (a spout's fields are part of its
        class, as in every squall component)."""
        return type(f"TestingSpout_{'_'.join(fields)}", (cls,), {"outputs": list(fields)})

    def next_tuple(self) -> bool:
        if self.next == len(self.items):
            return False
        self.emit(self.items[self.next], msg_id=self.next)
        self.next += 1
        return True


@dataclass
class RunResult:
    """What each component emitted, per stream, and what became of the spouts' tuples."""

    emitted: dict[tuple[str, str], list[tuple[Any, ...]]] = field(
        default_factory=lambda: defaultdict(list)
    )
    acked: dict[str, list[Any]] = field(default_factory=lambda: defaultdict(list))
    failed: dict[str, list[Any]] = field(default_factory=lambda: defaultdict(list))
    errors: dict[str, list[str]] = field(default_factory=lambda: defaultdict(list))

    def values(self, component: str, stream: str = DEFAULT_STREAM) -> list[tuple[Any, ...]]:
        """Every tuple `component` emitted on `stream`, batches as their rows."""
        return list(self.emitted.get((component, stream), []))


class _Recorder:
    """Sits between a component and its executor: records each emit, then passes it on."""

    def __init__(self, collector: Any, component: str, executor: Executor, result: RunResult):
        self.collector, self.component = collector, component
        self.executor, self.result = executor, result
        self.lock = threading.Lock()

    def emit(self, values: list[Any], stream: str, direct_task: int | None, msg_id: Any = None):
        targets = self.collector.emit(values, stream, direct_task, msg_id)
        with self.lock:
            self.result.emitted[(self.component, stream)].append(tuple(values))
        return targets  # a shell component answers need_task_ids with them

    def emit_batch(self, columns: Any, stream: str, direct_task: int | None, msg_id: Any = None):
        self.collector.emit_batch(columns, stream, direct_task, msg_id)
        fields = self.executor.streams[stream]
        table = as_table(columns, fields, f"{self.component} on stream {stream!r}")
        rows = zip(*(table.column(i).to_pylist() for i in range(len(fields))), strict=True)
        with self.lock:
            self.result.emitted[(self.component, stream)].extend(rows)


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
    structure: TopologyStructure = topology.structure()
    conf = cluster_conf(**{**topology.config, **(conf or {})})
    counts = structure.task_counts()
    ackers = conf["topology.acker.executors"]
    counts[ACKER] = 1 if ackers is None else ackers
    if not counts[ACKER]:
        del counts[ACKER]
    task_components = assign_task_ids(counts)
    by_component: dict[str, list[int]] = defaultdict(list)
    for task, name in sorted(task_components.items()):
        by_component[name].append(task)

    result = RunResult()
    executors: dict[int, Executor] = {}  # filled below; Inbound looks tasks up at delivery
    inbound = Inbound(structure, executors, conf["topology.backpressure.enable"])
    io = WorkerTaskIO(
        Router(structure, task_components, task_components),
        inbound.deliver,
        by_component[ACKER],
        lambda component, _task, text: result.errors[component].append(text),
        send_many=inbound.deliver_many,
        congested=inbound.congested,
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
            component.collector = _Recorder(component.collector, name, executor, result)
        if isinstance(component, Spout):
            _record_verdicts(component, name, result)
        executors[task] = executor
    try:
        deadline = time.monotonic() + timeout
        for executor in executors.values():
            executor.start()
        # every task ready (a SparkBolt's session up) before any spout emits: readiness.py
        _wait_while(
            executors,
            lambda: not all(e.stats.ready for e in executors.values()),
            deadline,
            "the topology's tasks were still starting",
        )
        polls = {t: e.polls for t, e in executors.items() if isinstance(e, SpoutExecutor)}
        for executor in executors.values():
            executor.active.set()
        # each spout's idle flag is news only once it polled while active: until then a run
        # could look finished before it began
        _wait_while(
            executors,
            lambda: any(executors[t].polls == n for t, n in polls.items()),  # type: ignore[attr-defined]
            deadline,
            "the spouts had not started",
        )
        _wait_until_done(executors, deadline, result)
    finally:
        for executor in executors.values():
            executor.stop()
        for executor in executors.values():
            executor.thread.join(30)
        if any(isinstance(e.component, SparkBolt) for e in executors.values()):
            spark.stop()
        scratch.cleanup()
    return result


def _record_verdicts(spout: Spout, name: str, result: RunResult) -> None:
    """Note each ack and fail the spout gets, then let the spout's own method run."""
    ack, fail = spout.ack, spout.fail

    def recorded_ack(msg_id: Any) -> None:
        result.acked[name].append(msg_id)
        ack(msg_id)

    def recorded_fail(msg_id: Any) -> None:
        result.failed[name].append(msg_id)
        fail(msg_id)

    spout.ack, spout.fail = recorded_ack, recorded_fail  # type: ignore[method-assign]


def _instance(
    topology: type[Topology], name: str, inputs: Mapping[str, Iterable[Sequence[Any]]]
) -> Component | None:
    if name == ACKER:
        return None
    spec = topology.specs[name]
    if name in inputs:
        return TestingSpout(inputs[name])  # emits on the replaced spout's declared streams
    return spec.component(**spec.kwargs)


def _wait_while(
    executors: Mapping[int, Executor], waiting: Callable[[], bool], deadline: float, what: str
) -> None:
    """Poll until `waiting()` is false; a task that stopped, or the deadline, ends the run."""
    while waiting():
        _check_alive(executors)
        if time.monotonic() > deadline:
            raise RunTimeout(f"{what} at the deadline")
        time.sleep(0.01)


def _wait_until_done(executors: Mapping[int, Executor], deadline: float, result: RunResult) -> None:
    """Done: every spout ran dry with nothing pending, every inbox is empty, and every
    tuple sent was executed, in two looks in a row."""
    previous = None
    while True:
        now = _progress(executors, result)
        if now is not None and now == previous:
            return
        previous = now
        if time.monotonic() > deadline:
            raise RunTimeout("the topology was still working at the deadline")
        time.sleep(0.05)


def _check_alive(executors: Mapping[int, Executor]) -> None:
    stopped = sorted(
        {e.context.component_id for e in executors.values() if not e.thread.is_alive()}
    )
    if stopped:
        causes = [
            e.fatal.splitlines()[0]
            for e in executors.values()
            if e.fatal and not e.thread.is_alive()
        ]
        raise RunFailed(f"{', '.join(stopped)} could not start: {'; '.join(causes) or '?'}")


def _progress(executors: Mapping[int, Executor], result: RunResult) -> tuple[int, int] | None:
    _check_alive(executors)
    stats = [e.stats for e in executors.values()]
    if not all(s.ready for s in stats):
        return None
    spouts = [e for e in executors.values() if isinstance(e.component, Spout)]
    if not all(e.stats.idle for e in spouts):
        return None
    if any(not e.inbox.empty() for e in executors.values()):
        return None
    sent = sum(sum(s.transferred.values()) for s in stats)
    executed = sum(s.executed for s in stats)
    if sent != executed:
        return None
    return sent, executed
