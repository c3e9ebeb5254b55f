"""The __acker task's loop: protocol messages from its inbox into `Acker`, its verdicts out
to the spout tasks, and a tick a second to forget trees past the message timeout."""

from __future__ import annotations

import queue
import time
from typing import Any

from .acker import Acker
from .acking import AckerReceived, AckTree, FailTree, InitTree, Tick
from .executors import Executor

EXPIRY_PERIOD = 1.0


class AckerExecutor(Executor):
    kind = "acker"

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.acker = Acker(self.timeout)

    def loop(self) -> None:
        last_expiry = time.monotonic()
        while not self.stopping.is_set():
            self.mark()
            try:
                message = self.inbox.get(timeout=0.5)
            except queue.Empty:
                message = None
            now = time.monotonic()
            if message is not None:
                self.receive(message, now)
            if now - last_expiry > EXPIRY_PERIOD:
                self.acker.handle(Tick(now))
                last_expiry = now

    def receive(self, message: Any, now: float) -> None:
        if not isinstance(message, InitTree | AckTree | FailTree):
            raise TypeError(f"an acker task takes protocol messages, not {message!r}")
        for instruction in self.acker.handle(AckerReceived(message, now)):
            self.carry_out(instruction)
