"""Deliveries arriving at this worker (from the transport, or from its own tasks) put on the
inbox of the executor they are for, as the Tuple, Batch or protocol message it takes. One
that this worker cannot take (a task it does not run, a stream the topology lacks, a table
whose columns are not the stream's fields) is logged and dropped.

Local backpressure (Storm 2's): `deliver_many` from an executor's flush waits, checking the
sender's stop flag, while a target's receive queue holds its capacity of data; protocol
messages never wait, so acks keep flowing and a DAG cannot deadlock (nor a task that emits
to itself: it never waits on its own queue). Without a stop flag
(the transport's receiving thread, shared or its own) it never waits."""

from __future__ import annotations

import logging
import threading
from collections import defaultdict
from collections.abc import Mapping, Sequence
from functools import partial
from itertools import compress, repeat
from operator import itemgetter

from squall.components import Tuple
from squall.structure import TopologyStructure

from .acking import PROTOCOL_TYPES, SYSTEM_STREAMS, ProtocolMessage, stream_message
from .compact_frames import CompactRows
from .delivery import Delivery, TableDelivery, TupleDelivery, as_tuple
from .executors import Executor, InboxItem, inbox_item
from .protocol_frames import grouped_by

_new = tuple.__new__
_TARGET = itemgetter(0)  # a protocol message's target task
_TUPLE = partial(_new, Tuple)  # Tuple(...) without its Python-level __new__
MAX_CACHED_STREAMS = 10_000
ROOM_WAIT_SECS = 0.05  # how often a waiting sender looks at its stop flag

log = logging.getLogger("squall.worker")


class Inbound:
    def __init__(
        self,
        structure: TopologyStructure,
        executors: Mapping[int, Executor],
        backpressure: bool = True,
    ) -> None:
        self.structure = structure
        self.executors = executors  # filled in once the executors are built
        self.backpressure = backpressure
        self._fields: dict[tuple[str, str], tuple[str, ...]] = {}

    def fields_of(self, component: str, stream: str) -> tuple[str, ...]:
        """The declared fields of a stream (KeyError for an unknown one); looked up once. A
        system stream's are never cached: a peer may name any component with it, and junk
        names must not fill the cache that the fast paths read."""
        if stream in SYSTEM_STREAMS:
            return SYSTEM_STREAMS[stream]
        key = (component, stream)
        fields = self._fields.get(key)
        if fields is None:
            fields = self.structure.components[component].streams[stream]
            if len(self._fields) < MAX_CACHED_STREAMS:  # the topology's streams: few
                self._fields[key] = fields
        return fields

    def congested(self, task: int) -> bool:
        """Whether a task of this worker has its receive queue full of data."""
        executor = self.executors.get(task)
        return self.backpressure and executor is not None and not executor.inbox.has_room()

    def load(self, task: int) -> float:
        """How full a task's receive queue is, 0 to 1 (locality.py's load)."""
        executor = self.executors.get(task)
        return 0.0 if executor is None else executor.inbox.fill()

    def deliver_many(
        self,
        deliveries: Sequence[Delivery | ProtocolMessage],
        stopping: threading.Event | None = None,
    ) -> None:
        """Put each delivery on its task's queue, one put per task and kind; with `stopping`
        (an executor's flush), wait while a target's queue is full of data."""
        data: dict[int, list[InboxItem]] = defaultdict(list)
        protocol: dict[int, list[InboxItem]] = defaultdict(list)
        sources = set()
        executors, known = self.executors, self._fields
        for delivery in deliveries:
            if type(delivery) is TupleDelivery and delivery.target in executors:
                # the per-tuple case, its checks inlined: a known data stream for a task here
                target, component, task, stream, values, roots, ids = delivery
                if stream in SYSTEM_STREAMS:  # an ack, init or verdict from another worker
                    try:
                        protocol[target].append(stream_message(target, stream, values))
                    except ValueError as exc:
                        log.warning(
                            "malformed %s tuple for task %s dropped: %s", stream, target, exc
                        )
                    continue
                fields = known.get((component, stream))
                if fields is not None:  # a data stream (system streams went above)
                    data[target].append(
                        as_tuple(component, task, stream, fields, values, roots, ids)
                    )
                    sources.add(task)
                    continue
            if isinstance(delivery, PROTOCOL_TYPES):  # a local ack, init or verdict
                if delivery.target in self.executors:
                    protocol[delivery.target].append(delivery)
                continue
            item = self._item(delivery)
            if item is not None:
                system = delivery.stream in SYSTEM_STREAMS
                (protocol if system else data)[delivery.target].append(item)
                sources.add(delivery.task)
        for task, items in protocol.items():
            self.executors[task].inbox.put_many(items, protocol=True)
        for task, items in data.items():
            self._put_data(task, items, stopping, task not in sources)

    def deliver_rows(self, rows: CompactRows) -> bool:
        """A compact frame from another worker (one component and stream), made into the
        Tuples its targets take straight from its columns, and put on their queues: no
        TupleDelivery per row, no look at each row (bench/receive_path.py: the receive side
        of a remote row costs a third less interpreted, a fifth compiled). False, and nothing
        put, for what only deliver_many handles (a system stream, an unknown stream, a task
        this worker does not run: it logs them). Never waits (the transport's receiving
        thread)."""
        fields = self._fields.get((rows.component, rows.stream))  # cached by deliver_many
        targets = rows.targets
        unique = set(targets)
        executors = self.executors
        if fields is None or rows.stream in SYSTEM_STREAMS or not unique <= executors.keys():
            return False
        n = len(rows.values)
        roots, ids = rows.anchors()
        head = (repeat(rows.component, n), rows.tasks, repeat(rows.stream, n), repeat(fields, n))
        tuples = list(map(_TUPLE, zip(*head, map(tuple, rows.values), roots, ids, strict=True)))
        for task in unique:  # each target's rows in order, picked in C
            mine = tuples if len(unique) == 1 else list(compress(tuples, map(task.__eq__, targets)))
            executors[task].inbox.put_many(mine)
        return True

    def deliver_protocol(self, messages: list[ProtocolMessage]) -> None:
        """A protocol frame's messages from another worker (acks, inits, verdicts), put on
        their targets' queues in order, one put per target, grouped in C: no look at each
        message as `deliver_many` takes (bench/crossing.py). Messages for a task this
        worker does not run are dropped, as `deliver_many` drops them."""
        executors = self.executors
        for task, items in grouped_by(messages, list(map(_TARGET, messages))).items():
            executor = executors.get(task)
            if executor is not None:
                executor.inbox.put_many(items, protocol=True)

    def deliver_local(
        self,
        data: Mapping[int, list[Tuple]],
        protocol: Mapping[int, list[ProtocolMessage]],
        source: int,
        stopping: threading.Event | None,
    ) -> None:
        """An executor's flush of the Tuples and protocol messages it made for tasks of this
        worker (the per-tuple case: no TupleDelivery to build and take apart, no routing per
        message), in order per target; with `stopping`, waits while a target other than
        the `source` task itself is full of data."""
        executors = self.executors
        for task, messages in protocol.items():
            executors[task].inbox.put_many(messages, protocol=True)
        for task, items in data.items():
            self._put_data(task, items, stopping, task != source)

    def _put_data(
        self, task: int, items: Sequence[InboxItem], stopping: threading.Event | None, wait: bool
    ) -> None:
        inbox = self.executors[task].inbox
        if wait and self.backpressure and stopping is not None:
            while not inbox.has_room() and not stopping.is_set():
                inbox.wait_room(ROOM_WAIT_SECS)
        inbox.put_many(items)

    def _item(self, delivery: Delivery) -> InboxItem | None:
        """What the target's inbox takes; None (logged) when this worker cannot take it."""
        target, component, stream = delivery.target, delivery.component, delivery.stream
        executor = self.executors.get(target)
        if executor is None:
            log.warning("tuple for task %s, which this worker does not run; dropped", target)
            return None
        try:
            fields = self.fields_of(component, stream)
        except KeyError:
            log.warning("tuple on unknown stream %s/%s; dropped", component, stream)
            return None
        if isinstance(delivery, TableDelivery):
            if delivery.stream in SYSTEM_STREAMS:
                log.warning("table on system stream %s; dropped", delivery.stream)
                return None
            if tuple(delivery.table.column_names) != fields:
                log.warning(
                    "table on %s/%s with columns %s; dropped",
                    delivery.component,
                    delivery.stream,
                    delivery.table.column_names,
                )
                return None
        return inbox_item(delivery, fields)
