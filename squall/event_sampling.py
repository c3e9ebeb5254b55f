"""Storm's debug option (event sampling): which share of a component's emitted tuples its
executors log on the "squall.eventlog" logger (Storm's event logger). Pure: the random draw
is passed in, so a seeded sampler makes it repeatable and testable.

Nimbus stores the options in the topology's StormBase record (`component_debug`, as Storm's
StormBase does), keyed by component id, or by the topology id for topology-wide debug:
workers already watch that record, and the options change its status-like state, not the
conf.
"""

from __future__ import annotations

import math
import random
from collections.abc import Mapping

EVENT_LOGGER = "squall.eventlog"


class SamplingError(ValueError):
    """A samplingPercentage that is not a number."""


def sampling_percentage(value: float) -> float:
    """Storm's Nimbus.debug: the percentage clamped to 0..100; NaN is refused."""
    if math.isnan(value):
        raise SamplingError("samplingPercentage is not a number")
    return max(0.0, min(100.0, float(value)))


def with_debug(
    component_debug: Mapping[str, float], key: str, enable: bool, percentage: float
) -> dict[str, float]:
    """The options after debug(enable, percentage) on `key` (a component or the topology
    id): enabling sets its percentage, disabling removes it."""
    out = dict(component_debug)
    if enable:
        out[key] = sampling_percentage(percentage)
    else:
        out.pop(key, None)
    return out


def percentage_for(component_debug: Mapping[str, float], topology_id: str, component: str) -> float:
    """The share of `component`'s tuples to log: its own option wins over the topology's;
    0 when neither is on."""
    if component in component_debug:
        return component_debug[component]
    return component_debug.get(topology_id, 0.0)


def sampled(percentage: float, draw: float) -> bool:
    """Whether a tuple is logged, given a uniform `draw` in [0, 1) (Storm's
    `random.nextDouble() * 100 < samplingpct`)."""
    return draw * 100 < percentage


class Sampler:
    """A seeded stream of decisions (one per emitted tuple), so runs repeat exactly."""

    def __init__(self, seed: int) -> None:
        self.random = random.Random(seed)
        self.percentage = 0.0  # set by the worker from the StormBase record

    def __call__(self) -> bool:
        percentage = self.percentage
        return percentage > 0 and sampled(percentage, self.random.random())
