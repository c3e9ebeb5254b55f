"""Tuples per second through a multilang (shell) bolt against the same bolt as a native
squall Bolt (#14), same spout, same run, same machine.

The bolt upper-cases a word and emits it anchored to its input. Three versions:
- native: a squall Bolt in the worker's own Python;
- pystorm: a streamparse/pystorm Bolt in a subprocess (`streamparse_run`), as streamparse
  users have it; JSON over stdin/stdout, one exchange per tuple (tuple, emit, ack);
- bash: tests/integration/topologies/resources/upper.sh, the protocol in another language.

Each runs the topology `spout -> upper -> count` in one process with squall.testing.run
(real executors, acker on, no ZooKeeper or sockets), TUPLES words, and the time from start
to done is taken for each of RUNS runs; the median is reported. A run's time includes
starting the subprocess (tens of ms), so a second figure isolates the per-tuple cost: the
bolt's `process` called directly in a loop with a collector that only counts emits.

Run: .venv/bin/python bench/multilang.py [tuples] (20,000 by default)
"""

from __future__ import annotations

import os
import platform
import statistics
import sys
import tempfile
import time
from dataclasses import replace
from pathlib import Path
from typing import Any

from squall import Bolt, Spout, Topology
from squall.components import TaskContext, Tuple
from squall.shell_components import ShellBolt
from squall.testing import run

RUNS = 3
BASH_DIR = Path(__file__).parents[1] / "tests" / "integration" / "topologies"
PYSTORM_BOLT = """
from streamparse import Bolt


class Upper(Bolt):
    outputs = ["word"]

    def process(self, tup):
        self.emit([tup.values[0].upper()])
"""


class Words(Spout):
    outputs = ["word"]
    total = 20_000

    def initialize(self, conf, context):
        self.sent = 0

    def next_tuple(self):
        if self.sent >= self.total:
            return False
        self.sent += 1
        self.emit([f"w{self.sent % 500}"], msg_id=self.sent)
        return True


class NativeUpper(Bolt):
    outputs = ["word"]

    def process(self, tup):
        self.emit([tup.values[0].upper()])


class Count(Bolt):
    def initialize(self, conf, context):
        self.n = 0

    def process(self, tup):
        self.n += 1


def shell_spec(command: str, script: str, code_dir: Path, outputs: list[str]) -> Any:
    spec = ShellBolt.spec(command=command, script=script, outputs=outputs, inputs=["words"])
    return replace(spec, kwargs={**spec.kwargs, "code_dir": str(code_dir)})


def topology(upper: Any) -> type[Topology]:
    return type(
        "Bench",
        (Topology,),
        {
            "words": Words.spec(),
            "upper": upper,
            "count": Count.spec(inputs=["upper"]),
            "config": {"topology.max.spout.pending": 1000},
        },
    )


def through_topology(upper: Any, tuples: int) -> float:
    Words.total = tuples
    started = time.perf_counter()
    result = run(topology(upper), timeout=600)
    elapsed = time.perf_counter() - started
    assert not any(result.errors.values()), dict(result.errors)
    assert len(result.acked["words"]) == tuples, len(result.acked["words"])
    return tuples / elapsed


class Counting:
    def __init__(self) -> None:
        self.n = 0

    def emit(self, values: list[Any], stream: str, direct: int | None, msg_id: Any) -> list[int]:
        self.n += 1
        return [2]


def through_process(bolt: Bolt, tuples: int) -> float:
    """`process` alone: the per-tuple cost of the component, without the worker around it."""
    bolt.collector = Counting()
    context = TaskContext("bench", "upper", 1, (1,), tempfile.gettempdir())
    bolt.initialize({"topology.subprocess.timeout.secs": 30}, context)
    try:
        started = time.perf_counter()
        for i in range(tuples):
            bolt.process(Tuple("words", 2, "default", ("word",), (f"w{i % 500}",)))
        elapsed = time.perf_counter() - started
    finally:
        bolt.cleanup()
    assert bolt.collector.n == tuples
    return tuples / elapsed


def main() -> None:
    tuples = int(sys.argv[1]) if len(sys.argv) > 1 else 20_000
    with tempfile.TemporaryDirectory() as scratch:
        resources = Path(scratch) / "resources"
        resources.mkdir()
        (resources / "bench_upper.py").write_text(PYSTORM_BOLT)
        versions = {
            "native": (NativeUpper.spec(inputs=["words"]), NativeUpper),
            "pystorm": (
                shell_spec("streamparse_run", "bench_upper.Upper", Path(scratch), ["word"]),
                lambda: ShellBolt("streamparse_run", "bench_upper.Upper", code_dir=scratch),
            ),
            "bash": (
                shell_spec("bash", "upper.sh", BASH_DIR, ["word", "pid"]),
                lambda: ShellBolt("bash", "upper.sh", code_dir=str(BASH_DIR)),
            ),
        }
        print(f"{platform.node()}: {os.cpu_count()} cores, Python {platform.python_version()}")
        print(f"{tuples} tuples, median of {RUNS} runs\n")
        print("| bolt | topology tuples/s | process() tuples/s |")
        print("|---|---|---|")
        for name, (spec, make) in versions.items():
            topo = statistics.median(through_topology(spec, tuples) for _ in range(RUNS))
            alone = statistics.median(through_process(make(), tuples) for _ in range(RUNS))
            print(f"| {name} | {topo:,.0f} | {alone:,.0f} |", flush=True)


if __name__ == "__main__":
    main()
