"""The records stored in ZooKeeper, as frozen dataclasses with a JSON codec.

Decoding is strict: data written by an older or foreign version raises RecordError naming
the node, instead of a KeyError deep inside a daemon.
"""

from __future__ import annotations

import functools
import json
import math
import types
import typing
from dataclasses import asdict, dataclass, field, fields, is_dataclass
from typing import Any, TypeVar

R = TypeVar("R")


class RecordError(ValueError):
    """A ZooKeeper node holds data this version cannot read."""


def encode(record: Any) -> bytes:
    return json.dumps(asdict(record), separators=(",", ":"), sort_keys=True).encode()


def decode(cls: type[R], data: bytes, where: str) -> R:
    try:
        raw = json.loads(data.decode())
    except (UnicodeDecodeError, ValueError, RecursionError) as exc:
        raise RecordError(f"{where}: not a JSON {cls.__name__} record") from exc
    if not isinstance(raw, dict):
        raise RecordError(f"{where}: expected a JSON object for {cls.__name__}")
    names = {f.name for f in fields(cls)}  # type: ignore[arg-type]
    required = {
        f.name
        for f in fields(cls)  # type: ignore[arg-type]
        if f.default is f.default_factory  # both MISSING: no default
    }
    missing = required - raw.keys()
    if missing:
        raise RecordError(f"{where}: {cls.__name__} record lacks {', '.join(sorted(missing))}")
    try:
        record = cls._from_raw({k: v for k, v in raw.items() if k in names})  # type: ignore[attr-defined]
    except (TypeError, ValueError, AttributeError, IndexError, KeyError) as exc:
        raise RecordError(f"{where}: malformed {cls.__name__} record: {exc}") from exc
    problem = type_problem(record)
    if problem:
        raise RecordError(f"{where}: malformed {cls.__name__} record: {problem}")
    return record


def type_problem(value: Any, hint: Any = None) -> str | None:
    """Why `value` does not match `hint` (a record's field annotations when `hint` is None),
    or None. Records are written by other processes, and anyone on the network can write
    ZooKeeper: a field of the wrong type must fail here, at the read that skips the node,
    not later inside a daemon (a name of 5, a status of [] broke getClusterInfo)."""
    if hint is None:
        hints = _field_hints(value.__class__)
        for f in fields(value):
            problem = type_problem(getattr(value, f.name), hints[f.name])
            if problem:
                return f"{f.name}: {problem}"
        return None
    if hint is Any:
        return None
    if hint in _PLAIN:  # the common leaves first: a beat holds thousands of them
        return _plain_problem(value, hint)
    origin, args = typing.get_origin(hint), typing.get_args(hint)
    if origin in (typing.Union, types.UnionType):
        ok = any(type_problem(value, a) is None for a in args)
        return None if ok else f"{value!r:.40} is none of {hint}"
    if isinstance(hint, type) and is_dataclass(hint):
        return type_problem(value) if isinstance(value, hint) else f"not a {hint.__name__}"
    if origin is dict:
        if not isinstance(value, dict):
            return f"{value!r:.40} is not a map"
        if args[1] is Any:  # only the keys to check (a task's stats)
            return next(filter(None, (type_problem(k, args[0]) for k in value)), None)
        for k, v in value.items():
            problem = type_problem(k, args[0]) or type_problem(v, args[1])
            if problem:
                return problem
        return None
    if origin in (list, tuple):
        if not isinstance(value, origin):
            return f"{value!r:.40} is not a {origin.__name__}"
        items = args if origin is tuple else [args[0]] * len(value)
        if len(items) != len(value):
            return f"{value!r:.40} has {len(value)} items, not {len(items)}"
        return next(filter(None, map(type_problem, value, items)), None)
    return _plain_problem(value, hint)


_PLAIN = (str, int, float, bool)


def _plain_problem(value: Any, hint: type) -> str | None:
    if hint in (int, float) and isinstance(value, bool):
        return f"{value!r} is not a number"
    if hint is float and isinstance(value, int):
        return None
    return None if isinstance(value, hint) else f"{value!r:.40} is not {hint.__name__}"


@functools.cache
def _field_hints(cls: type) -> dict[str, Any]:
    """A record class's resolved field annotations, once per class: resolving them compiles
    every string annotation, and doing that per decoded record was most of nimbus's monitor
    round (bench/monitor_round.py)."""
    return typing.get_type_hints(cls)


def trusted_epoch(assignment_epoch: int, current_epoch: int) -> bool:
    """An assignment can only have been written by a leader whose epoch is at most the
    current /nimbus/epoch (a deposed leader's writes are fenced by the epoch's version, and
    an unchanged assignment keeps the epoch it was written under). One from a later epoch was
    not written by any nimbus: acting on it let one anonymous write move a worker."""
    return 0 <= assignment_epoch <= current_epoch


# The values a /storms record's statuses and pending event may take (nimbus/core/states.py's
# TopologyStatus and EVENT_NAMES): checked at the read, as its types are, so that a node
# holding another value is skipped with a RecordError instead of failing a transition.
STATUSES = frozenset({"active", "inactive", "killed", "rebalancing"})
PENDING_EVENTS = frozenset({"remove", "do-rebalance"})


@dataclass(frozen=True)
class PendingEvent:
    """A delayed transition (kill's remove, rebalance's do-rebalance) kept in /storms so it
    survives a nimbus restart (STORM-3516). `due_secs` is wall-clock time."""

    event: str
    due_secs: float


@dataclass(frozen=True)
class StormBase:
    """/storms/[topology-id]: what a topology is and which status it is in."""

    name: str
    status: str
    launch_time_secs: int
    num_workers: int
    component_executors: dict[str, int]
    owner: str = ""
    previous_status: str | None = None
    pending: PendingEvent | None = None
    # Storm's debug options: component id (or the topology id) -> sampling percentage
    component_debug: dict[str, float] = field(default_factory=dict)
    # Resource-aware scheduling: component id -> (on-heap MB, CPU %) per task, fixed at submit
    # from the component and topology confs; empty when the topology declares no resources.
    component_resources: dict[str, tuple[float, float]] = field(default_factory=dict)
    # Generic resources (topology.component.resources.map, Storm's addResource): component
    # id -> {resource name: amount per task}, fixed at submit; only components declaring some.
    component_generic: dict[str, dict[str, float]] = field(default_factory=dict)

    @classmethod
    def _from_raw(cls, raw: dict[str, Any]) -> StormBase:
        pending = raw.get("pending")
        resources = raw.get("component_resources", {})
        generic = raw.get("component_generic", {})
        for key, allowed in (("status", STATUSES), ("previous_status", STATUSES | {None})):
            if raw.get(key) not in allowed:
                raise ValueError(f"{key}: no topology status {raw.get(key)!r:.40}")
        if pending and pending.get("event") not in PENDING_EVENTS:
            raise ValueError(f"no pending event {pending.get('event')!r:.40}")
        due = pending.get("due_secs") if pending else 0.0
        if type(due) not in (int, float):  # bool and text too: compared, they would raise
            raise ValueError(f"pending due_secs {due!r:.40} is not a number")
        return cls(
            **{
                **raw,
                "component_executors": {
                    str(k): int(v) for k, v in raw["component_executors"].items()
                },
                "pending": PendingEvent(**pending) if pending else None,
                "component_resources": {str(k): _need(v) for k, v in resources.items()},
                "component_generic": {str(k): amounts(v) for k, v in generic.items()},
            }
        )


def _need(value: Any) -> tuple[float, float]:
    """A (memory MB, CPU %) pair of non-negative numbers, or ValueError."""
    mem, cpu = value
    for x in (mem, cpu):
        if isinstance(x, bool) or not isinstance(x, (int, float)) or not 0 <= x < math.inf:
            raise ValueError(f"resources must be two finite numbers >= 0, got {value!r:.40}")
    return (float(mem), float(cpu))


def amounts(value: Any) -> dict[str, float]:
    """A generic-resource map ({"gpu.count": 2}: names to finite numbers >= 0, Storm's
    supervisor.resources.map and topology.component.resources.map), or ValueError."""
    if value is None:
        return {}
    if not isinstance(value, dict):
        raise ValueError(f"resources must be a map of names to numbers, got {value!r:.40}")
    out: dict[str, float] = {}
    for name, x in value.items():
        if isinstance(x, bool) or not isinstance(x, (int, float)) or not 0 <= x < math.inf:
            raise ValueError(f"resource {name!r:.40} must be a finite number >= 0, got {x!r:.40}")
        out[str(name)] = float(x)
    return out


Slot = tuple[str, int]  # (supervisor id, port)


@dataclass(frozen=True)
class Assignment:
    """/assignments/[topology-id]: which slot runs each task, and since when."""

    epoch: int
    code_dir: str
    node_host: dict[str, str]
    task_slots: dict[int, Slot]
    task_start_secs: dict[int, int]

    def slots(self) -> set[Slot]:
        return set(self.task_slots.values())

    def tasks_on(self, slot: Slot) -> list[int]:
        return sorted(t for t, s in self.task_slots.items() if s == slot)

    @classmethod
    def _from_raw(cls, raw: dict[str, Any]) -> Assignment:
        return cls(
            epoch=int(raw["epoch"]),
            code_dir=str(raw["code_dir"]),
            node_host={str(k): str(v) for k, v in raw["node_host"].items()},
            task_slots={int(t): (str(s[0]), int(s[1])) for t, s in raw["task_slots"].items()},
            task_start_secs={int(t): int(v) for t, v in raw["task_start_secs"].items()},
        )


@dataclass(frozen=True)
class SupervisorInfo:
    """/supervisors/[supervisor-id] (ephemeral)."""

    host: str
    ports: list[int]
    start_time_secs: int
    version: str = "unknown"
    # What the resource-aware scheduler may place here (supervisor.memory.capacity.mb,
    # supervisor.cpu.capacity); a record without them (an older supervisor) gets Storm's
    # defaults.
    memory_capacity_mb: float = 4096.0
    cpu_capacity: float = 400.0
    # supervisor.resources.map: generic resources offered ({"gpu.count": 2}; none: {})
    generic_resources: dict[str, float] = field(default_factory=dict)
    # its warm Spark Connect server: "off", "starting", "ready" or "failed: <reason>"
    # (supervisor/spark_server.py readiness); a record without it (an older supervisor)
    # reads as "unknown"
    spark_connect: str = "unknown"

    @classmethod
    def _from_raw(cls, raw: dict[str, Any]) -> SupervisorInfo:
        capacity = _need((raw.get("memory_capacity_mb", 4096.0), raw.get("cpu_capacity", 400.0)))
        return cls(
            **{
                **raw,
                "ports": [int(p) for p in raw["ports"]],
                "memory_capacity_mb": capacity[0],
                "cpu_capacity": capacity[1],
                "generic_resources": amounts(raw.get("generic_resources")),
            }
        )


@dataclass(frozen=True)
class WorkerBeat:
    """/taskbeats/[topology-id]/[node-port]: one write per worker per beat, covering all of
    its tasks. `seq` grows with every beat; nimbus watches it change and never compares the
    worker's clock (`time_secs`) with its own."""

    seq: int
    time_secs: int
    uptime_secs: int
    tasks: dict[int, dict[str, Any]] = field(default_factory=dict)

    @classmethod
    def _from_raw(cls, raw: dict[str, Any]) -> WorkerBeat:
        return cls(
            seq=int(raw["seq"]),
            time_secs=int(raw["time_secs"]),
            uptime_secs=int(raw["uptime_secs"]),
            tasks={int(t): dict(s) for t, s in raw.get("tasks", {}).items()},
        )


@dataclass(frozen=True)
class NimbusInfo:
    """/nimbuses/[host:port] (ephemeral): a nimbus that can answer, leader or standby."""

    host: str
    port: int
    start: float
    version: str = "unknown"

    @classmethod
    def _from_raw(cls, raw: dict[str, Any]) -> NimbusInfo:
        return cls(**raw)


@dataclass(frozen=True)
class ErrorReport:
    """One entry of /errors/[topology-id]/[component] (a JSON list of them)."""

    error: str
    time_secs: int
    host: str | None = None
    port: int | None = None

    @classmethod
    def _from_raw(cls, raw: dict[str, Any]) -> ErrorReport:
        return cls(**raw)
