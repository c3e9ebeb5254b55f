"""A squall topology with a shell bolt written in bash (resources/upper.sh): a fixed list of
words, each sent once (untracked), upper-cased by the bash subprocess, written by a sink."""

from squall import Spout, Topology
from squall.shell_components import ShellBolt
from squall.sinks import FileSink

WORDS = ["alpha", "beta", "garbage", "gamma", "disorder", "delta", "epsilon"]


class Words(Spout):
    outputs = ["word"]

    def initialize(self, conf, context):
        self.left = list(WORDS)

    def next_tuple(self):
        if not self.left:
            return False
        self.emit([self.left.pop(0)])
        return True


class ShellUpper(Topology):
    config = {"topology.workers": 1}
    words = Words.spec()
    upper = ShellBolt.spec(
        command="bash", script="upper.sh", outputs=["word", "pid"], inputs=[words]
    )
    sink = FileSink.spec(inputs=[upper])
