"""The TaskIO executors use to route, send and report. Routing follows the topology's
groupings (Router); `send` is the Transport's in a worker (which skips the network for
tasks of the same worker) and Inbound's `deliver` when every task lives in one process
(squall.testing)."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

import pyarrow as pa

from .delivery import Delivery
from .routing import Router


class WorkerTaskIO:
    def __init__(
        self,
        router: Router,
        send: Callable[[Delivery], None],
        ackers: Sequence[int],
        report_error: Callable[[str, int, str], None],
    ) -> None:
        self.router = router
        self._send = send
        self.ackers = tuple(ackers)
        self._report_error = report_error

    def targets(
        self, component: str, task: int, stream: str, values: Sequence[Any], direct: int | None
    ) -> list[int]:
        return self.router.targets(component, task, stream, values, direct)

    def split(
        self, component: str, task: int, stream: str, table: pa.Table, direct: int | None
    ) -> list[tuple[int, pa.Table]]:
        return self.router.split(component, task, stream, table, direct)

    def send(self, delivery: Delivery) -> None:
        self._send(delivery)

    def report_error(self, component: str, task: int, text: str) -> None:
        self._report_error(component, task, text)
