"""A bolt that imports a package the worker's host does not have: its worker cannot start
the task, and the topology must say so wherever an operator looks."""

from squall import Bolt, Spout, Topology


class Numbers(Spout):
    outputs = ["n"]

    def next_tuple(self):
        return False


class Geocode(Bolt):
    def initialize(self, conf, context):
        import squall_geocoder_not_installed  # noqa: F401 - missing on purpose


class MissingPackage(Topology):
    config = {"topology.workers": 1}
    numbers = Numbers.spec()
    geocode = Geocode.spec(inputs=[numbers])
