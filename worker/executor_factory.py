"""Builds a task's executor: loads the user's component class from the topology's code and
picks the executor kind that runs it (spout, bolt, SparkBolt, acker)."""

from __future__ import annotations

import importlib
import sys
from pathlib import Path
from typing import Any

from squall.components import Component, SparkBolt, Spout, TaskContext
from squall.structure import TopologyStructure

from .acker_executor import AckerExecutor
from .acking import ACKER
from .bolt_executor import BoltExecutor, SparkBoltExecutor
from .executors import Executor, TaskIO
from .spark import SparkHolder
from .spout_executor import SpoutExecutor


def load_component(code_dir: Path, module_name: str, class_name: str, kwargs: dict) -> Any:
    code = str(code_dir / "code")
    if code not in sys.path:
        sys.path.insert(0, code)
    obj: Any = importlib.import_module(module_name)
    for part in class_name.split("."):
        obj = getattr(obj, part)
    if getattr(obj, "needs_code_dir", False):  # shell components run in the package's dir
        kwargs = {**kwargs, "code_dir": code}
    return obj(**kwargs)


def make_executor(
    structure: TopologyStructure,
    component: Component | None,
    context: TaskContext,
    conf: dict[str, Any],
    io: TaskIO,
    spark: SparkHolder | None = None,
) -> Executor:
    """The executor of one task; `component` is the user's instance (None for an acker).
    `conf` is the topology's; the component's own conf overrides it here."""
    name = context.component_id
    if name == ACKER:
        return AckerExecutor(None, context, {}, conf, io)
    info = structure.components[name]
    conf = {**conf, **info.conf}
    if component is None:
        raise ValueError(f"{name} has no component: only an acker runs without one")
    is_spout = isinstance(component, Spout)
    if is_spout != (info.kind == "spout"):  # a foreign client's map: its acks would go astray
        what = "a Spout" if is_spout else "not a Spout"
        raise ValueError(f"{name} is declared a {info.kind}, and its class is {what}")
    if isinstance(component, SparkBolt):
        if spark is None:
            raise ValueError(f"{name} is a SparkBolt, and this worker has no Spark")
        inputs = {
            (i.component, i.stream): structure.components[i.component].streams[i.stream]
            for i in info.inputs
        }
        return SparkBoltExecutor(
            component, context, info.streams, conf, io, spark=spark, input_fields=inputs
        )
    kind = SpoutExecutor if is_spout else BoltExecutor
    return kind(component, context, info.streams, conf, io)


def load_executor(
    structure: TopologyStructure,
    code_dir: Path,
    context: TaskContext,
    conf: dict[str, Any],
    io: TaskIO,
    spark: SparkHolder,
) -> Executor:
    """The executor of one task of a submitted topology, its component loaded from code."""
    component = None
    if context.component_id != ACKER:
        info = structure.components[context.component_id]
        component = load_component(code_dir, info.module_name, info.class_name, info.kwargs)
    return make_executor(structure, component, context, conf, io, spark)
