"""What nimbus must do, as typed frozen instructions from `decide.handle`, carried out in
order by the controller. Every write carries the epoch it was decided under: the shell
refuses one whose epoch is no longer this nimbus's (FencedOut), and ZooKeeper's transaction
check refuses it if another nimbus took a newer epoch meanwhile."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from squall.log_config import LoggerLevel
from squall.nimbus.core import states
from squall.records import Assignment, StormBase
from squall.structure import TopologyStructure


@dataclass(frozen=True)
class SaveCode:
    """Move the finished upload at `location` into the code store with its description."""

    topology_id: str
    name: str
    location: str
    structure: TopologyStructure
    conf: Mapping[str, Any]
    wall: float
    epoch: int


@dataclass(frozen=True)
class CreateTopology:
    """/storms, /tasks, /taskbeats and /assignments of a new topology, all or none; on
    failure its saved code is removed again."""

    topology_id: str
    base: StormBase
    tasks: Mapping[int, str]
    assignment: Assignment
    epoch: int


@dataclass(frozen=True)
class WriteBase:
    topology_id: str
    base: StormBase
    epoch: int


@dataclass(frozen=True)
class WriteTasks:
    """/tasks renumbered and the assignment that uses the new ids, in one transaction: a
    leader that went between the two would leave the next one no sign that the workers
    still hold the old numbering (reassign.py)."""

    topology_id: str
    tasks: Mapping[int, str]
    assignment: Assignment
    epoch: int


@dataclass(frozen=True)
class WriteAssignment:
    topology_id: str
    assignment: Assignment
    epoch: int


@dataclass(frozen=True)
class UpdateConf:
    """The topology conf as workers will fetch it when they (re)start."""

    topology_id: str
    conf: Mapping[str, Any]
    epoch: int


@dataclass(frozen=True)
class WriteLogConfig:
    """/logconfigs/<id>, which the topology's workers watch."""

    topology_id: str
    config: Mapping[str, LoggerLevel]
    epoch: int


@dataclass(frozen=True)
class RemoveTopology:
    """Its ZooKeeper nodes and its code."""

    topology_id: str
    epoch: int


@dataclass(frozen=True)
class RemoveCode:
    """Stored code with no /storms node (found on taking the lead)."""

    topology_id: str
    epoch: int


@dataclass(frozen=True)
class RemoveOrphanAssignment:
    """An /assignments node with no /storms node (found on taking the lead)."""

    topology_id: str
    epoch: int


@dataclass(frozen=True)
class AppendLog:
    """A coordinator-log message; `values` already carries the epoch for replay."""

    type: str
    key: str
    values: Mapping[str, Any]
    epoch: int


@dataclass(frozen=True)
class StartTimer:
    """Deliver TimerFired(topology_id, event) after `delay_secs`."""

    topology_id: str
    event: states.Remove | states.DoRebalance
    delay_secs: float


Instruction = (
    SaveCode
    | CreateTopology
    | WriteBase
    | WriteTasks
    | WriteAssignment
    | UpdateConf
    | WriteLogConfig
    | RemoveTopology
    | RemoveCode
    | RemoveOrphanAssignment
    | AppendLog
    | StartTimer
)
