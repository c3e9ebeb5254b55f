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
RunTimeout at `timeout`. The run itself is squall/worker/in_process.py's.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from pathlib import Path
from typing import Any

from squall.components import Component, Spout, TaskContext
from squall.config import cluster_conf
from squall.run_result import RunFailed, RunResult, RunTimeout
from squall.structure import ACKER, TopologyStructure
from squall.topology import Topology
from squall.validation import cap_parallelism
from squall.worker.in_process import run_tasks

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
    return run_tasks(
        structure, conf, lambda name: _instance(topology, name, inputs), timeout, output_dir
    )


def _instance(
    topology: type[Topology], name: str, inputs: Mapping[str, Iterable[Sequence[Any]]]
) -> Component | None:
    if name == ACKER:
        return None
    spec = topology.specs[name]
    if name in inputs:
        return TestingSpout(inputs[name])  # emits on the replaced spout's declared streams
    return spec.component(**spec.kwargs)
