"""How big a ZeroMQ message between workers may be, in parts and in bytes, and the throttle
that keeps a peer's junk from filling the worker's log.

ZeroMQ's MAXMSGSIZE bounds one frame, not a message: a peer could send a message of a million
frames, each under the limit, and a receiver that takes it with recv_multipart would hold all
of them at once. A sender packs its frames into messages of at most MAX_PARTS parts and
`frame_limit` bytes in total; a receiver reads a message a part at a time and drops (without
keeping its parts) any message larger than that, since no worker sends one.
"""

from __future__ import annotations

import logging
import math
import time
from collections.abc import Sequence
from dataclasses import dataclass

MAX_PARTS = 1000  # the sender's MAX_DELIVERIES_PER_SEND: at most one frame per delivery
# CURVE wraps each frame in a MESSAGE command (33 bytes more), and MAXMSGSIZE applies to the
# wrapped frame: frames are kept this much under worker.max.message.bytes, CURVE or not.
FRAME_OVERHEAD = 64


def frame_limit(max_message_bytes: int) -> int:
    """The most payload bytes one message (and so one frame) may carry."""
    return max(1, max_message_bytes - FRAME_OVERHEAD)


def pack(frames: Sequence[bytes], max_bytes: int, max_parts: int = MAX_PARTS) -> list[list[bytes]]:
    """`frames`, in order, as messages of at most `max_parts` parts and `max_bytes` bytes in
    total (each frame is at most `max_bytes` already; one that is not goes alone)."""
    messages: list[list[bytes]] = []
    current: list[bytes] = []
    size = 0
    for frame in frames:
        if current and (len(current) >= max_parts or size + len(frame) > max_bytes):
            messages.append(current)
            current, size = [], 0
        current.append(frame)
        size += len(frame)
    if current:
        messages.append(current)
    return messages


def over_bound(parts: int, total_bytes: int, max_bytes: int, max_parts: int = MAX_PARTS) -> bool:
    """Whether a message read so far has more parts or bytes than any worker sends."""
    return parts > max_parts or total_bytes > max_bytes


@dataclass
class Throttle:
    """Counts events and says when to report them: at most once per `every` seconds."""

    every: float
    count: int = 0
    reported_at: float = -math.inf

    def note(self, now: float) -> int:
        """Count one event; the number to report now (since the last report), or 0."""
        self.count += 1
        if now - self.reported_at < self.every:
            return 0
        count, self.count, self.reported_at = self.count, 0, now
        return count

    def warn(
        self, logger: logging.Logger, message: str, *args: object, now: float | None = None
    ) -> None:
        """Count one event and log `message` (its first %d the count so far) if one is due;
        `now` for a caller with a clock of its own."""
        count = self.note(time.monotonic() if now is None else now)
        if count:
            logger.warning(message, count, *args)
