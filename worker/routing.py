"""Which tasks receive an emitted tuple: Storm's groupings, as plain logic.

Fields grouping hashes with CRC-32 of the JSON-encoded key values, so every worker process
agrees on the target (Python's own hash() is salted per process).
"""

from __future__ import annotations

import json
import zlib
from collections import defaultdict
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

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


@dataclass(frozen=True)
class Subscription:
    component: str
    grouping: GroupingSpec
    tasks: tuple[int, ...]
    key_index: tuple[int, ...]  # positions of the grouping fields in the emitted values


def fields_hash(values: Sequence[Any]) -> int:
    return zlib.crc32(json.dumps(list(values), sort_keys=True, default=str).encode())


class Router:
    def __init__(
        self,
        structure: TopologyStructure,
        task_components: Mapping[int, str],
        local_tasks: Iterable[int],
    ) -> None:
        by_component: dict[str, list[int]] = defaultdict(list)
        for task, component in sorted(task_components.items()):
            by_component[component].append(task)
        self.local = set(local_tasks)
        self.subscriptions: dict[tuple[str, str], list[Subscription]] = {}
        for name, info in structure.components.items():
            for stream, fields in info.streams.items():
                self.subscriptions[(name, stream)] = [
                    Subscription(
                        consumer,
                        grouping,
                        tuple(by_component.get(consumer, ())),
                        tuple(fields.index(f) for f in grouping.fields),
                    )
                    for consumer, grouping in structure.consumers(name, stream)
                ]
        self.counters: dict[tuple[int, str, str], int] = defaultdict(int)

    def targets(
        self,
        component: str,
        task: int,
        stream: str,
        values: Sequence[Any],
        direct_task: int | None = None,
    ) -> list[int]:
        out: list[int] = []
        for sub in self.subscriptions.get((component, stream), ()):
            if not sub.tasks:
                continue
            kind = sub.grouping.kind
            if kind == DIRECT:
                if direct_task in sub.tasks:
                    out.append(direct_task)
            elif direct_task is not None:
                continue  # a direct emit reaches only direct subscribers
            elif kind == FIELDS:
                key = [values[i] for i in sub.key_index]
                out.append(sub.tasks[fields_hash(key) % len(sub.tasks)])
            elif kind == ALL:
                out.extend(sub.tasks)
            elif kind == GLOBAL:
                out.append(min(sub.tasks))
            elif kind in (SHUFFLE, NONE, LOCAL_OR_SHUFFLE):
                pool = sub.tasks
                if kind == LOCAL_OR_SHUFFLE:
                    pool = tuple(t for t in sub.tasks if t in self.local) or sub.tasks
                counter_key = (task, stream, sub.component)
                out.append(pool[self.counters[counter_key] % len(pool)])
                self.counters[counter_key] += 1
        return out
