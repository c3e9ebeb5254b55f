"""The topology bench/controlplane.py submits: plain Python, never run (the simulated
supervisors only heartbeat for its workers); topology.workers is set at submit."""

from squall import Bolt, Grouping, Spout, Topology


class Idle(Spout):
    outputs = ["n"]

    def next_tuple(self):
        return False


class Drop(Bolt):
    def process(self, tup):
        pass


class ControlPlane(Topology):
    config = {"topology.acker.executors": 0}
    source = Idle.spec(par=50)
    sink = Drop.spec(inputs={source: Grouping.shuffle}, par=50)
