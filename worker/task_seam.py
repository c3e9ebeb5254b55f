"""The seam between an executor and its worker: `TaskIO` (where an emit goes, how a delivery
is sent, where an error is reported) and `inbox_item`, what a target executor's inbox takes
for a delivery. Both the in-process runner (squall.testing) and the worker implement it.
"""

from __future__ import annotations

import threading
from collections.abc import Sequence
from typing import Any, Protocol

import pyarrow as pa

from squall.components import Batch, Tuple

from .acking import SYSTEM_STREAMS, ProtocolMessage, stream_message
from .delivery import Delivery, TableDelivery, as_tuple

Input = Tuple | Batch
InboxItem = Input | ProtocolMessage


class TaskIO(Protocol):
    """What an executor needs from its worker: where an emit goes, the acker tasks (and
    those of its own worker), how its flushed deliveries and protocol messages are handed
    over, and a place to report user-code errors (per task: the worker throttles each
    task's reports). The worker's (task_io.WorkerTaskIO) and the in-process runner's are
    one class; unit tests use a recording one with this same interface."""

    ackers: tuple[int, ...]
    near_ackers: tuple[int, ...]  # the ackers among `local_tasks`
    local_tasks: frozenset[int]  # the tasks of this process

    def targets(
        self,
        component: str,
        task: int,
        stream: str,
        values: Sequence[Any],
        direct_task: int | None = None,
    ) -> list[int]: ...

    def split(
        self,
        component: str,
        task: int,
        stream: str,
        table: pa.Table,
        direct_task: int | None = None,
    ) -> list[tuple[int, pa.Table]]: ...

    def send_many(
        self, deliveries: list[Delivery | ProtocolMessage], stopping: threading.Event | None
    ) -> None:
        """Send in order (protocol messages as they are); with `stopping`, may wait (until it
        is set) while a target's queue is full; without, never waits."""

    def deliver_local(
        self,
        data: dict[int, list[Tuple]],
        protocol: dict[int, list[ProtocolMessage]],
        source: int,
        stopping: threading.Event | None,
    ) -> None:
        """Put the Tuples and protocol messages an executor made for `local_tasks` on their
        inboxes (in order per target; with `stopping`, may wait while one is full of data,
        unless it is the `source` task itself)."""

    def congested(self, component: str) -> bool:
        """Whether a task `component` emits to has a full queue (a spout then pauses)."""
        return False

    def report_error(self, component: str, task: int, text: str) -> None: ...


def inbox_item(delivery: Delivery, fields: tuple[str, ...]) -> InboxItem:
    """What the target executor's inbox takes for a delivery on a stream with `fields`."""
    if isinstance(delivery, TableDelivery):
        return Batch(
            delivery.component,
            delivery.task,
            delivery.stream,
            fields,
            delivery.table,
            delivery.anchors,
        )
    if delivery.stream in SYSTEM_STREAMS:
        return stream_message(delivery.target, delivery.stream, delivery.values)
    head = (delivery.component, delivery.task, delivery.stream, fields)
    return as_tuple(*head, delivery.values, delivery.roots, delivery.ids)
