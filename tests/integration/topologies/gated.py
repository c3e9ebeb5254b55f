"""Numbers let through a gate: each spout task emits its share of 0, 1, 2, ... below the
limit written in the gate file ($SQUALL_TEST_GATE when the file is loaded, at submit), so a
test decides how much input exists at each point of a run. Plain Python (no Spark),
fields-grouped into a file sink, so numbers cross to whichever worker holds their sink task.
Nothing is replayed: a lost tuple shows as a missing number, a duplicate as a copy."""

import os
from pathlib import Path

from squall import Grouping, Spout, Topology
from squall.sinks import FileSink


class GatedNumbers(Spout):
    outputs = ["n"]

    def __init__(self, gate: str, **kwargs):
        super().__init__(**kwargs)
        self.gate = Path(gate)

    def initialize(self, conf, context):
        self.step = len(context.component_tasks)
        self.next = context.task_index
        self.limit = 0

    def next_tuple(self):
        if self.next >= self.limit:
            try:
                self.limit = int(self.gate.read_text())
            except (OSError, ValueError):
                return False
            if self.next >= self.limit:
                return False
        self.emit([self.next], msg_id=self.next)
        self.next += self.step
        return True


class Gated(Topology):
    config = {"topology.workers": 2}
    numbers = GatedNumbers.spec(par=2, gate=os.environ.get("SQUALL_TEST_GATE", "/nonexistent"))
    sink = FileSink.spec(inputs={numbers: Grouping.fields("n")}, par=4)
