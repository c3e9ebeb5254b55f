"""A `Receiving` (worker/transport.py) for tests that build a Transport: where what arrives
goes as the test says, and for the rest what a worker without those parts does (compact
frames' rows refused, so they arrive as deliveries; every local queue empty)."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from squall.worker.transport import Receiving


def receiving(
    deliver_many: Callable[..., Any],
    fields_of: Callable[..., Any],
    *,
    full: Callable[[int], bool] | None = None,
    fill: Callable[[int], float] = lambda task: 0.0,
) -> Receiving:
    """`full` None: no backpressure; `fill`: each local task's queue fill, 0 to 1."""
    return Receiving(
        deliver_many,
        fields_of,
        full=full,
        deliver_rows=lambda rows: False,
        fill=fill,
        deliver_protocol=lambda messages: deliver_many(messages, None),
    )
