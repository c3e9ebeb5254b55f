"""Nimbus's decisions for Storm's setLogConfig and debug, pure (called from decide.handle on
the controller thread, so only the leader writes and every write carries its epoch).

The merged log config lives in the topology's model (and /logconfigs/<id>), so two requests
decided one after the other never lose each other's loggers; debug options live in the
StormBase record (squall.event_sampling says why).
"""

from __future__ import annotations

from dataclasses import replace

from squall.event_sampling import SamplingError, with_debug
from squall.log_config import LogConfigError, merge
from squall.nimbus.core import events as ev
from squall.nimbus.core import instructions as ins
from squall.nimbus.core.model import NimbusModel
from squall.validation import invalid

Result = tuple[NimbusModel, list[ins.Instruction]]


def set_log_config(model: NimbusModel, e: ev.SetLogConfig) -> Result:
    topology = model.find(e.name)
    try:
        merged = merge(topology.log_config, e.changes, int(e.wall * 1000))
    except LogConfigError as exc:
        raise invalid(f"setLogConfig: {exc}") from exc
    model = model.with_topology(replace(topology, log_config=merged))
    return model, [ins.WriteLogConfig(topology.id, merged, model.epoch)]


def debug(model: NimbusModel, e: ev.Debug) -> Result:
    """Storm's debug: the topology id stands for the whole topology (component "")."""
    topology = model.find(e.name)
    key = e.component or topology.id
    if e.component and e.component not in topology.base.component_executors:
        raise invalid(f"debug: {e.component!r} is not a component of {topology.base.name!r}")
    try:
        options = with_debug(topology.base.component_debug, key, e.enable, e.percentage)
    except SamplingError as exc:
        raise invalid(f"debug: {exc}") from exc
    base = replace(topology.base, component_debug=options)
    model = model.with_topology(replace(topology, base=base))
    return model, [ins.WriteBase(topology.id, base, model.epoch)]
