"""A pystorm bolt as a streamparse project has it: it writes down every tick its
process_tick gets (pystorm's Bolt acks it after), for tests/integration/test_tick_tuples.py."""

import json
import os

from pystorm import Bolt


class TickBolt(Bolt):
    def initialize(self, conf, context):
        out = conf["topology.output.dir"]
        os.makedirs(out, exist_ok=True)
        path = os.path.join(out, f"{context['componentid']}-{context['taskid']}.jsonl")
        self.file = open(path, "a")  # noqa: SIM115 - open for the task's life

    def process(self, tup):
        raise AssertionError(f"a tuple that is no tick: {tup!r}")

    def process_tick(self, tup):
        seen = [tup.component, tup.task, tup.stream, list(tup.values)]
        self.file.write(json.dumps(seen) + "\n")
        self.file.flush()
