"""The __acker task's turns: protocol messages from its inbox into `Acker` (every message
waiting per turn), its verdicts out to the spout tasks (in one flush per turn), and a tick a
second to forget trees past the message timeout."""

from __future__ import annotations

import time
from typing import Any

from .acker import Acker
from .acking import AckerReceived, AckTree, FailTree, InitTree, Tick
from .executors import Executor

EXPIRY_PERIOD = 1.0
IDLE_WAIT = 0.5  # seconds an idle acker waits for messages before it looks again


class AckerExecutor(Executor):
    kind = "acker"

    def _init_kind(self) -> None:
        self.acker = Acker(self.timeout)
        self.last_expiry = time.monotonic()

    def turn(self) -> float:
        self.mark()
        messages = self.inbox.take(1 << 30, 0)
        now = time.monotonic()
        if messages:
            self.receive_many(messages, now)
        self.flush()  # the verdicts of this turn, as one list
        if now - self.last_expiry > EXPIRY_PERIOD:
            self.acker.handle(Tick(now))
            self.last_expiry = now
        return 0.0 if messages else IDLE_WAIT

    def receive_many(self, messages: list[Any], now: float) -> None:
        verdicts = self.acker.received(messages, now)  # TypeError for what is not a message
        if self._send_many is not None:
            self._buffer_protocol(verdicts)  # every one a protocol message
        else:
            for instruction in verdicts:
                self.carry_out(instruction)

    def receive(self, message: Any, now: float) -> None:
        if not isinstance(message, InitTree | AckTree | FailTree):
            raise TypeError(f"an acker task takes protocol messages, not {message!r}")
        for instruction in self.acker.handle(AckerReceived(message, now)):
            self.carry_out(instruction)
