"""What can happen to nimbus, as typed frozen events for `decide.handle`.

The shell reads and validates everything an event needs (ZooKeeper, the store, the inbox,
the clocks) before building it, so deciding never does I/O. `now` is nimbus's monotonic
clock (heartbeat ages, launch grace); `wall` is wall-clock time (what is written to
ZooKeeper and shown to users).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from squall.log_config import Change, LoggerLevel
from squall.nimbus.core import states
from squall.nimbus.core.coordinator_log import CoordinatorMessage
from squall.records import Assignment, Slot, StormBase, SupervisorInfo, WorkerBeat
from squall.structure import TopologyStructure


@dataclass(frozen=True)
class Submit:
    name: str
    topology_id: str  # new, chosen by the shell
    structure: TopologyStructure  # validated
    conf: Mapping[str, Any]  # validated topology conf
    location: str  # a finished upload in the inbox
    inactive: bool
    now: float
    wall: float


@dataclass(frozen=True)
class Kill:
    name: str
    wait_secs: int | None
    wall: float


@dataclass(frozen=True)
class Rebalance:
    name: str
    wait_secs: int | None
    num_workers: int | None
    executors: Mapping[str, Any] | None
    wall: float
    # Storm 2's RebalanceOptions overrides: topology conf keys merged into the topology's conf,
    # and per component the resources one task declares from now on (Storm's names)
    conf: Mapping[str, Any] = field(default_factory=dict)
    resources: Mapping[str, Mapping[str, float]] = field(default_factory=dict)


@dataclass(frozen=True)
class Activate:
    name: str
    wall: float


@dataclass(frozen=True)
class Deactivate:
    name: str
    wall: float


@dataclass(frozen=True)
class SetConfig:
    name: str
    key: str
    value: Any  # the JSON value, parsed
    wall: float


@dataclass(frozen=True)
class SetLogConfig:
    """Storm's setLogConfig: `changes` per logger, already validated."""

    name: str
    changes: Mapping[str, Change]
    wall: float


@dataclass(frozen=True)
class Debug:
    """Storm's debug: `component` "" is the whole topology."""

    name: str
    component: str
    enable: bool
    percentage: float
    wall: float


@dataclass(frozen=True)
class MonitorTick:
    """The periodic check: supervisors and every topology's worker beats, just read."""

    now: float
    wall: float
    supervisors: Mapping[str, SupervisorInfo]
    beats: Mapping[str, Mapping[Slot, WorkerBeat]] = field(default_factory=dict)


@dataclass(frozen=True)
class SupervisorsChanged(MonitorTick):
    """A supervisor came or went (a watch fired): decided like a monitor round, at once,
    with no new beats (the heartbeat cache keeps what the last round saw)."""


@dataclass(frozen=True)
class BecameLeader:
    """This nimbus took the epoch; what it loaded from ZooKeeper and the store."""

    epoch: int
    storm_ids: frozenset[str]  # every /storms child, readable or not
    assignment_ids: frozenset[str]  # every /assignments child, orphans included
    bases: Mapping[str, StormBase]  # the readable /storms records
    assignments: Mapping[str, Assignment]
    supervisors: Mapping[str, SupervisorInfo]
    stored_ids: frozenset[str]  # topologies whose code the store holds
    stored_confs: Mapping[str, Mapping[str, Any]]  # their confs as stored
    log: tuple[CoordinatorMessage, ...]
    now: float
    wall: float
    log_configs: Mapping[str, Mapping[str, LoggerLevel]] = field(default_factory=dict)
    # /tasks as ZooKeeper holds them: a rebalance whose leader went during its wait left them
    # numbered by the old counts, and the next leader must see that to rewrite them
    tasks: Mapping[str, Mapping[int, str]] = field(default_factory=dict)


@dataclass(frozen=True)
class TimerFired:
    """A delayed transition (kill's remove, rebalance's do-rebalance) is due."""

    topology_id: str
    event: states.Remove | states.DoRebalance
    now: float
    wall: float


@dataclass(frozen=True)
class Refreshed:
    """ZooKeeper re-read: by a standby to answer reads, by the leader after a decision it
    could carry out only in part."""

    bases: Mapping[str, StormBase]
    assignments: Mapping[str, Assignment]
    supervisors: Mapping[str, SupervisorInfo]
    tasks: Mapping[str, Mapping[int, str]] | None = None  # /tasks, read by a leader only


Event = (
    Submit
    | Kill
    | Rebalance
    | Activate
    | Deactivate
    | SetConfig
    | SetLogConfig
    | Debug
    | MonitorTick
    | SupervisorsChanged
    | BecameLeader
    | TimerFired
    | Refreshed
)
