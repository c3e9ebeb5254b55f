"""Tick tuples live: a spout that never emits, and three bolts that write down every tick
they get (one JSON line each) under topology.output.dir: a Bolt with process_tick, one with
only process (ticks reach it there, as Storm's execute) and a period of its own in its
component conf, and a pystorm bolt (resources/tick_bolt.py) through Storm's multilang."""

import json
import os

from squall import Bolt, Spout, Topology
from squall.shell_components import ShellBolt

TICK = "topology.tick.tuple.freq.secs"


class Silent(Spout):
    outputs = ["n"]

    def next_tuple(self):
        return False


class Recorder(Bolt):
    def initialize(self, conf, context):
        out = conf["topology.output.dir"]
        os.makedirs(out, exist_ok=True)
        path = os.path.join(out, f"{context.component_id}-{context.task_id}.jsonl")
        self.file = open(path, "a")  # noqa: SIM115 - open for the task's life

    def write(self, tup):
        seen = [tup.source_component, tup.source_task, tup.stream, list(tup.values)]
        self.file.write(json.dumps(seen) + "\n")
        self.file.flush()


class TickHandler(Recorder):
    def process(self, tup):
        raise AssertionError(f"a tuple that is no tick: {tup!r}")

    def process_tick(self, tup):
        self.write(tup)


class PlainBolt(Recorder):
    def process(self, tup):
        self.write(tup)


class TickTuples(Topology):
    config = {"topology.workers": 1, TICK: 1}
    silent = Silent.spec()
    handler = TickHandler.spec(inputs=[silent])
    plain = PlainBolt.spec(inputs=[silent], config={TICK: 2})
    shell = ShellBolt.spec(command="streamparse_run", script="tick_bolt.TickBolt", inputs=[silent])
