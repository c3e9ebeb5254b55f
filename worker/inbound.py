"""Deliveries arriving at this worker (from the transport, or from its own tasks) put on the
inbox of the executor they are for, as the Tuple, Batch or protocol message it takes. One
that this worker cannot take (a task it does not run, a stream the topology lacks, a table
whose columns are not the stream's fields) is logged and dropped."""

from __future__ import annotations

import logging
from collections.abc import Mapping

from squall.structure import TopologyStructure

from .acking import SYSTEM_STREAMS
from .delivery import Delivery, TableDelivery
from .executors import Executor, inbox_item

log = logging.getLogger("squall.worker")


class Inbound:
    def __init__(self, structure: TopologyStructure, executors: Mapping[int, Executor]) -> None:
        self.structure = structure
        self.executors = executors  # filled in once the executors are built

    def fields_of(self, component: str, stream: str) -> tuple[str, ...]:
        if stream in SYSTEM_STREAMS:
            return SYSTEM_STREAMS[stream]
        return self.structure.components[component].streams[stream]

    def deliver(self, delivery: Delivery) -> None:
        target, component, stream = delivery.target, delivery.component, delivery.stream
        executor = self.executors.get(target)
        if executor is None:
            log.warning("tuple for task %s, which this worker does not run; dropped", target)
            return
        try:
            fields = self.fields_of(component, stream)
        except KeyError:
            log.warning("tuple on unknown stream %s/%s; dropped", component, stream)
            return
        if isinstance(delivery, TableDelivery):
            if delivery.stream in SYSTEM_STREAMS:
                log.warning("table on system stream %s; dropped", delivery.stream)
                return
            if tuple(delivery.table.column_names) != fields:
                log.warning(
                    "table on %s/%s with columns %s; dropped",
                    delivery.component,
                    delivery.stream,
                    delivery.table.column_names,
                )
                return
        executor.inbox.put(inbox_item(delivery, fields))
