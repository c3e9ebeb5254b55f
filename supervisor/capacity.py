"""What a supervisor offers the resource-aware scheduler, read from its conf as Storm's
SupervisorHeartbeat.mkSupervisorCapacities reads it: supervisor.memory.capacity.mb and
supervisor.cpu.capacity, each overridden by a supervisor.resources.map entry under that key;
every other entry of the map is a generic resource. Pure.

Unlike Storm, an entry under Storm's normalized name (memory.mb, cpu.pcore.percent) sets the
capacity too: Storm's normalization maps it and the legacy key to one name and its heartbeat
fails on the duplicate. squall refuses at start, with a ConfigError that says which, only a
capacity named twice with two different amounts.
Storm's component names for memory (onheap.memory.mb, offheap.memory.mb) mean nothing in an
offer: they are neither capacities nor generic resources.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from squall.config import ConfigError
from squall.records import amounts

MEMORY_KEY, CPU_KEY = "supervisor.memory.capacity.mb", "supervisor.cpu.capacity"
MEMORY_NAMES = (MEMORY_KEY, "memory.mb")
CPU_NAMES = (CPU_KEY, "cpu.pcore.percent")
NOT_OFFERED = ("onheap.memory.mb", "offheap.memory.mb")
RESOURCES_MAP = "supervisor.resources.map"


@dataclass(frozen=True)
class Capacity:
    memory_mb: float
    cpu: float
    generic: dict[str, float] = field(default_factory=dict)


def capacity(conf: Mapping[str, Any]) -> Capacity:
    """The supervisor's offer, or ConfigError for a malformed supervisor.resources.map."""
    try:
        offered = amounts(conf.get(RESOURCES_MAP))
    except ValueError as exc:
        raise ConfigError(f"{RESOURCES_MAP}: {exc}") from None
    memory = _capacity(offered, MEMORY_NAMES, float(conf[MEMORY_KEY]))
    cpu = _capacity(offered, CPU_NAMES, float(conf[CPU_KEY]))
    taken = (*MEMORY_NAMES, *CPU_NAMES, *NOT_OFFERED)
    return Capacity(memory, cpu, {k: v for k, v in offered.items() if k not in taken})


def _capacity(offered: Mapping[str, float], names: tuple[str, ...], legacy: float) -> float:
    given = {name: offered[name] for name in names if name in offered}
    if len(set(given.values())) > 1:
        both = " and ".join(f"{name}: {amount:g}" for name, amount in given.items())
        raise ConfigError(f"{RESOURCES_MAP} names one capacity twice ({both}): keep one")
    return next(iter(given.values()), legacy)
