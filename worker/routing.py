"""Which tasks receive an emitted tuple: Storm's groupings, as plain logic.

Fields grouping hashes each key value with CRC-32, so every worker process agrees on the
target (Python's own hash() is salted per process): a str by its UTF-8 bytes, an int by its
8-byte two's complement (Arrow's int64; bigger ones by their minimal bytes), bytes as they
are, and anything else by its JSON text. No JSON for the common keys: json.dumps per tuple
was the hot path's largest cost. One function for tuples and batches, so a key goes to the
same task either way.
"""

from __future__ import annotations

import json
import time
import zlib
from collections import defaultdict
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import pyarrow as pa
import pyarrow.compute as pc

from squall.structure import (
    ALL,
    DIRECT,
    FIELDS,
    GLOBAL,
    LOCAL_OR_SHUFFLE,
    NONE,
    SHUFFLE,
    GroupingSpec,
    TopologyStructure,
)

from .locality import LocalityBounds, LocalShuffle, scope_pools

MAX_CACHED_KEYS = 1 << 16  # str keys whose CRC a router keeps (past it: hashed each time)
REFRESH_EVERY = 16  # shuffle choices between two looks at the clock for a locality refresh


@dataclass(frozen=True)
class Subscription:
    component: str
    grouping: GroupingSpec
    tasks: tuple[int, ...]
    key_index: tuple[int, ...]  # positions of the grouping fields in the emitted values
    slot: int  # its place in the router's load-aware shuffles (Router._shuffles)
    kind: str  # grouping.kind, read per emit without a lookup on the grouping


def _key_bytes(value: Any) -> bytes:
    kind = type(value)
    if kind is str:
        return b"s" + value.encode("utf-8", "surrogatepass")
    if kind is int:
        try:
            return b"i" + value.to_bytes(8, "little", signed=True)
        except OverflowError:
            size = (value.bit_length() + 8) // 8
            return b"i" + value.to_bytes(size, "little", signed=True)
    if kind is bytes:
        return b"b" + value
    return b"j" + json.dumps(value, sort_keys=True, default=str).encode()


def fields_hash(values: Sequence[Any]) -> int:
    """The hash of a grouping key (its values in the grouping's field order)."""
    if len(values) == 1:
        return zlib.crc32(_key_bytes(values[0]))
    crc = 0
    for value in values:
        crc = zlib.crc32(_key_bytes(value), crc)
    return crc


class Router:
    def __init__(
        self,
        structure: TopologyStructure,
        task_components: Mapping[int, str],
        local_tasks: Iterable[int],
        locality: LocalityBounds | None = None,
    ) -> None:
        """`locality`: shuffle prefers near tasks while they have room (locality.py); None:
        round robin over every task (one process, or topology.disable.loadaware.messaging)."""
        by_component: dict[str, list[int]] = defaultdict(list)
        for task, component in sorted(task_components.items()):
            by_component[component].append(task)
        self.local = set(local_tasks)
        # per source, then stream: every emit looks them up by two str keys (a tuple key
        # was made and hashed per emit)
        self.subscriptions: dict[str, dict[str, list[Subscription]]] = defaultdict(dict)
        slots = 0
        for name, info in structure.components.items():
            for stream, fields in info.streams.items():
                subs = self.subscriptions[name][stream] = []
                for consumer, grouping in structure.consumers(name, stream):
                    subs.append(
                        Subscription(
                            consumer,
                            grouping,
                            tuple(by_component.get(consumer, ())),
                            tuple(fields.index(f) for f in grouping.fields),
                            slots,
                            grouping.kind,
                        )
                    )
                    slots += 1
        self.counters: dict[tuple[int, str, str], int] = defaultdict(int)
        self.locality = locality
        self.load: Callable[[int], float] = lambda task: 0.0  # a task's load, 0 to 1 (locality)
        self._host_of: Mapping[int, str] = {}
        self._host = ""
        # each subscription's load-aware shuffles, per emitting task (made at the first emit
        # after a placement)
        self._shuffles: list[dict[int, LocalShuffle]] = [{} for _ in range(slots)]
        self._key_crcs: dict[str, int] = {}  # str keys seen, hashed once (word-count keys recur)
        consumers: dict[str, set[str]] = defaultdict(set)
        for source, streams in self.subscriptions.items():
            for subs in streams.values():
                consumers[source].update(sub.component for sub in subs)
        # every task that a component's emits reach, directly or through other components: a
        # spout checks them all for congestion (a task on a shared thread never waits in a
        # flush, so a full queue two hops away holds back the spout, not the bolt between)
        self.downstream: dict[str, tuple[int, ...]] = {
            name: tuple(
                sorted(t for c in _reachable(name, consumers) for t in by_component.get(c, ()))
            )
            for name in structure.components
        }

    def place(self, host_of: Mapping[int, str], host: str) -> None:
        """Which host every task runs on, and this worker's (locality; when assignments change)."""
        self._host_of, self._host = dict(host_of), host
        self._shuffles = [{} for _ in self._shuffles]

    def _local_shuffle(self, task: int, sub: Subscription) -> LocalShuffle:
        assert self.locality is not None
        shuffles, host_of, host = self._shuffles[sub.slot], self._host_of, self._host
        if sub.kind == LOCAL_OR_SHUFFLE:  # by weight, never beyond these
            pool = self._worker_first(sub)
            pools: tuple[tuple[int, ...], ...] = (pool, pool, pool)
        else:
            pools = scope_pools(sub.tasks, self.local, host_of, host)
        shuffle = shuffles[task] = LocalShuffle(pools, self.locality)
        return shuffle

    def shuffle_of(self, task: int, component: str, stream: str, consumer: str) -> LocalShuffle:
        """The load-aware shuffle `task` uses for `consumer` (made if it has none yet)."""
        [sub] = [s for s in self._subscribers(component, stream) if s.component == consumer]
        return self._shuffle(sub, task)

    def _shuffle(self, sub: Subscription, task: int) -> LocalShuffle:
        return self._shuffles[sub.slot].get(task) or self._local_shuffle(task, sub)

    def _subscribers(self, component: str, stream: str) -> list[Subscription]:
        """What subscribes to `component`'s `stream` (targets has this inline)."""
        streams = self.subscriptions.get(component)
        return streams.get(stream, []) if streams is not None else []

    def _worker_first(self, sub: Subscription) -> tuple[int, ...]:
        """Local-or-shuffle's targets: `sub`'s tasks in this worker, or all where it has none."""
        return tuple(t for t in sub.tasks if t in self.local) or sub.tasks

    def _chosen(
        self, sub: Subscription, task: int, stream: str, direct_task: int | None
    ) -> list[int] | None:
        """The tasks of `sub` that receive what `task` emits now, whatever its values; None
        for fields grouping, where the values decide."""
        kind = sub.kind
        if kind == DIRECT:
            return [direct_task] if direct_task in sub.tasks else []
        if direct_task is not None:
            return []  # a direct emit reaches only direct subscribers
        if kind == FIELDS:
            return None
        if kind == ALL:
            return list(sub.tasks)
        if kind == GLOBAL:
            return [min(sub.tasks)]
        if self.locality is not None and kind in (SHUFFLE, NONE, LOCAL_OR_SHUFFLE):
            return [self._shuffled(sub, task)]
        pool = sub.tasks  # SHUFFLE, NONE, LOCAL_OR_SHUFFLE
        if kind == LOCAL_OR_SHUFFLE:
            pool = self._worker_first(sub)
        counter_key = (task, stream, sub.component)
        self.counters[counter_key] += 1
        return [pool[(self.counters[counter_key] - 1) % len(pool)]]

    def _shuffled(self, sub: Subscription, task: int) -> int:
        """The next target of `task`'s load-aware shuffle over `sub`'s tasks."""
        shuffle = self._shuffle(sub, task)
        target = shuffle.choose()
        if not shuffle.turn % REFRESH_EVERY:
            shuffle.refresh(self.load, time.monotonic())
        return target

    def targets(
        self,
        component: str,
        task: int,
        stream: str,
        values: Sequence[Any],
        direct_task: int | None = None,
    ) -> list[int]:
        out: list[int] = []
        streams = self.subscriptions.get(component)  # _subscribers, inline
        subs = streams.get(stream) if streams is not None else None
        if subs is None:
            return out
        locality = self.locality is not None
        for sub in subs:
            tasks = sub.tasks
            if not tasks:
                continue
            kind = sub.kind
            if direct_task is None and locality and kind in (SHUFFLE, NONE):
                out.append(self._shuffled(sub, task))  # per tuple: no lists
                continue
            if direct_task is None and kind == FIELDS:  # per tuple: no lists
                index = sub.key_index
                if len(index) == 1:
                    key = values[index[0]]
                    crc = self._key_crcs.get(key) if type(key) is str else None
                    if crc is None:
                        crc = zlib.crc32(_key_bytes(key))
                        if type(key) is str and len(self._key_crcs) < MAX_CACHED_KEYS:
                            self._key_crcs[key] = crc
                    out.append(tasks[crc % len(tasks)])
                else:
                    out.append(tasks[fields_hash([values[i] for i in index]) % len(tasks)])
                continue
            chosen = self._chosen(sub, task, stream, direct_task)
            out.extend(chosen or ())  # None (fields grouping) only without a direct task
        return out

    def split(
        self,
        component: str,
        task: int,
        stream: str,
        table: pa.Table,
        direct_task: int | None = None,
    ) -> list[tuple[int, pa.Table]]:
        """Where the rows of an emitted batch go: shuffle-like groupings send the whole batch
        to one task (round robin per batch), fields grouping sends each task its rows."""
        out: list[tuple[int, pa.Table]] = []
        for sub in self._subscribers(component, stream):
            if not sub.tasks:
                continue
            chosen = self._chosen(sub, task, stream, direct_task)
            if chosen is None:
                out.extend(_rows_by_key(table, sub.key_index, sub.tasks))
            else:
                out.extend((target, table) for target in chosen)
        return out


def _reachable(start: str, consumers: Mapping[str, set[str]]) -> set[str]:
    """The components downstream of `start` (itself only through a cycle)."""
    seen: set[str] = set()
    todo = list(consumers.get(start, ()))
    while todo:
        name = todo.pop()
        if name not in seen:
            seen.add(name)
            todo += consumers.get(name, ())
    return seen


def _rows_by_key(
    table: pa.Table, key_index: tuple[int, ...], tasks: tuple[int, ...]
) -> list[tuple[int, pa.Table]]:
    """Fields grouping for a batch, with the per-tuple hash: each distinct key is hashed once
    (a dictionary-encoded key column), then the rows are filtered per target."""
    try:
        if len(key_index) != 1:
            raise pa.ArrowNotImplementedError("compound key")
        encoded = pc.dictionary_encode(table.column(key_index[0]), null_encoding="encode")
        encoded = encoded.combine_chunks() if isinstance(encoded, pa.ChunkedArray) else encoded
        slots = [fields_hash([key]) % len(tasks) for key in encoded.dictionary.to_pylist()]
        row_slots = pc.take(pa.array(slots, type=pa.int32()), encoded.indices)
    except (pa.ArrowNotImplementedError, pa.ArrowInvalid, pa.ArrowTypeError):
        keys = zip(*(table.column(i).to_pylist() for i in key_index), strict=True)
        row_slots = pa.array([fields_hash(list(k)) % len(tasks) for k in keys], pa.int32())
    return [
        (tasks[slot], table.filter(pc.equal(row_slots, slot)))
        for slot in sorted(pc.unique(row_slots).to_pylist())
    ]
