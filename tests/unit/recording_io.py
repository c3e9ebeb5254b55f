"""A TaskIO (worker/task_seam.py) for pure unit tests of executors: the interface production
uses (`send_many`, `deliver_local`, `local_tasks`), recording what executors hand it.

`sent` lists every delivery in the order flushed, protocol messages in their wire form (a
TupleDelivery on a system stream, acking.message_delivery), so a test reads a verdict's
stream and turns a delivery into what the target's inbox takes (`inbox_item`) alike. An
executor buffers until a flush: with `topology.producer.batch.size` 1 in its conf (`CONF_ONE`)
each emit and ack is flushed as it is made, the production path with a batch of one."""

from __future__ import annotations

import threading
from collections.abc import Callable, Mapping, Sequence
from typing import Any

from squall.worker.acking import PROTOCOL_TYPES, message_delivery

FLUSH_EACH = {"topology.producer.batch.size": 1}


class RecordingIO:
    def __init__(
        self,
        routes: Mapping[tuple[str, str], Sequence[int]] | Callable[..., list[int]] = (),
        ackers: Sequence[int] = (99,),
        *,
        errors: str = "record",
        local_tasks: frozenset[int] = frozenset(),
    ) -> None:
        """`routes`: (component, stream) -> target tasks, or a function of targets' arguments.
        `errors`: "record" (into `errors`) or "raise" (an AssertionError: none expected)."""
        self.routes = dict(routes) if not callable(routes) else routes
        self.ackers = tuple(ackers)
        self.local_tasks = frozenset(local_tasks)
        self.near_ackers = tuple(a for a in self.ackers if a in self.local_tasks)
        self.raise_errors = errors == "raise"
        self.sent: list[Any] = []
        self.flushes = 0
        self.errors: list[str] = []

    def targets(self, component, task, stream, values, direct_task=None) -> list[int]:
        if callable(self.routes):
            return self.routes(component, task, stream, values, direct_task)
        return list(self.routes.get((component, stream), []))

    def split(self, component, task, stream, table, direct_task=None) -> list:
        return [(t, table) for t in self.targets(component, task, stream, None, direct_task)]

    def send_many(self, deliveries: list[Any], stopping: threading.Event | None) -> None:
        self.flushes += 1
        for d in deliveries:
            self.sent.append(message_delivery(d) if isinstance(d, PROTOCOL_TYPES) else d)

    def deliver_local(self, data, protocol, source, stopping) -> None:
        self.flushes += 1
        for items in data.values():
            self.sent.extend(items)
        for messages in protocol.values():
            self.sent.extend(message_delivery(m) for m in messages)

    def congested(self, component: str) -> bool:
        return False

    def report_error(self, component: str, task: int, text: str) -> None:
        if self.raise_errors:
            raise AssertionError(text)
        self.errors.append(text)
