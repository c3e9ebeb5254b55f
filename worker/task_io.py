"""The TaskIO executors use to route, send and report. Routing follows the topology's
groupings (Router); `send` is the Transport's in a worker (which skips the network for
tasks of the same worker) and Inbound's `deliver` when every task lives in one process
(squall.testing). `send_many` takes an executor's flushed list (and may wait while a local
target is full), `deliver_local` the Tuples it made for tasks of this worker; `congested`
tells a spout whether a task it emits to is full."""

from __future__ import annotations

import threading
from collections.abc import Callable, Sequence
from typing import Any

from .acking import PROTOCOL_TYPES, message_delivery
from .delivery import Delivery
from .routing import Router


class WorkerTaskIO:
    def __init__(
        self,
        router: Router,
        send: Callable[[Delivery], None],
        ackers: Sequence[int],
        report_error: Callable[[str, int, str], None],
        send_many: Callable[[list[Any], threading.Event | None], None] | None = None,
        congested: Callable[[int], bool] | None = None,
        deliver_local: Callable[
            [dict[int, list[Any]], dict[int, list[Any]], int, threading.Event | None], None
        ]
        | None = None,
    ) -> None:
        """`deliver_local`: Inbound's, for the Tuples and protocol messages executors make
        for this worker's tasks (`router.local`); without it all goes to `send_many`."""
        self.router = router
        self._send = send
        self._send_many = send_many
        if deliver_local is not None:
            self.deliver_local = deliver_local
            self.local_tasks = frozenset(router.local)
        self._congested = congested
        self.ackers = tuple(ackers)
        self.near_ackers = tuple(a for a in self.ackers if a in router.local)  # this worker's
        self._report_error = report_error
        # TaskIO's targets and split: the router's own methods, no call of ours per emit
        self.targets = router.targets
        self.split = router.split

    def send(self, delivery: Delivery) -> None:
        self._send(delivery)

    def send_many(self, deliveries: list[Any], stopping: threading.Event | None) -> None:
        """Deliveries and protocol messages (acking.PROTOCOL_TYPES), in order."""
        if self._send_many is None:
            for delivery in deliveries:
                if isinstance(delivery, PROTOCOL_TYPES):
                    delivery = message_delivery(delivery)
                self._send(delivery)
        else:
            self._send_many(deliveries, stopping)

    def congested(self, component: str) -> bool:
        if self._congested is None:
            return False
        return any(self._congested(task) for task in self.router.downstream.get(component, ()))

    def report_error(self, component: str, task: int, text: str) -> None:
        self._report_error(component, task, text)
