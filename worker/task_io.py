"""The TaskIO executors use to route, send and report. Routing follows the topology's
groupings (Router); `send_many` takes an executor's flushed list (and may wait while a local
target is full): the Transport's in a worker (which skips the network for tasks of the same
worker), Inbound's `deliver_many` when every task lives in one process (squall.testing);
`deliver_local` takes the Tuples it made for tasks of this process; `congested` tells a
spout whether a task it emits to is full."""

from __future__ import annotations

import threading
from collections.abc import Callable, Sequence
from typing import Any

from .routing import Router


class WorkerTaskIO:
    def __init__(
        self,
        router: Router,
        ackers: Sequence[int],
        report_error: Callable[[str, int, str], None],
        send_many: Callable[[list[Any], threading.Event | None], None],
        deliver_local: Callable[
            [dict[int, list[Any]], dict[int, list[Any]], int, threading.Event | None], None
        ],
        congested: Callable[[int], bool],
    ) -> None:
        """`deliver_local`: Inbound's, for the Tuples and protocol messages executors make
        for this process's tasks (`router.local`)."""
        self.router = router
        self.send_many = send_many  # Deliveries and protocol messages, in order
        self.deliver_local = deliver_local
        self.local_tasks = frozenset(router.local)
        self._congested = congested
        self.ackers = tuple(ackers)
        self.near_ackers = tuple(a for a in self.ackers if a in router.local)  # this worker's
        self._report_error = report_error
        # TaskIO's targets and split: the router's own methods, no call of ours per emit
        self.targets = router.targets
        self.split = router.split

    def congested(self, component: str) -> bool:
        return any(self._congested(task) for task in self.router.downstream.get(component, ()))

    def report_error(self, component: str, task: int, text: str) -> None:
        self._report_error(component, task, text)
