"""The __acker task's turns: protocol messages from its inbox into `Acker` (every message
waiting per turn), its verdicts out to the spout tasks (in one flush per turn), and a tick a
second to forget trees past the message timeout."""

from __future__ import annotations

import time
from typing import Any

from .acker import Acker
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
            self.acker.expire(now)
            self.last_expiry = now
        return 0.0 if messages else IDLE_WAIT

    def receive_many(self, messages: list[Any], now: float) -> None:
        """A turn's protocol messages into the acker; its verdicts buffered (every one a
        protocol message). TypeError for what is not a message."""
        self._buffer_protocol(self.acker.received(messages, now))  # type: ignore[arg-type]
