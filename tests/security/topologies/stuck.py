"""A bolt that blocks forever on its first tuple (a lost lock, a socket read with no
timeout), with a short stall timeout so its worker's watchdog catches it in seconds."""

import threading
import time

from squall import Bolt, Spout, Topology


class Trickle(Spout):
    outputs = ["n"]

    def initialize(self, conf, context):
        self.n = 0
        self.next_at = 0.0

    def next_tuple(self):
        now = time.monotonic()
        if now < self.next_at or self.n >= 50:
            return False
        self.next_at = now + 0.1
        self.n += 1
        self.emit([self.n], msg_id=self.n)
        return True


class Blocked(Bolt):
    def process(self, tup):
        threading.Event().wait()  # never set


class Stuck(Topology):
    config = {"topology.workers": 1, "topology.executor.stall.secs": 5}
    trickle = Trickle.spec()
    blocked = Blocked.spec(inputs=[trickle])
