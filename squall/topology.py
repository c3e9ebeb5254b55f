"""The Python topology DSL: a Topology subclass whose attributes are component specs.

    class WordCount(Topology):
        lines = LineSpout.spec(par=2)
        words = SplitBolt.spec(inputs={lines: Grouping.shuffle}, par=2)
        counts = CountBolt.spec(inputs={words: Grouping.fields("word")}, par=2)

`to_thrift` turns it into Storm's StormTopology struct, which is what nimbus validates and
stores: the DSL is one client of the Thrift API, not a privileged one.
"""

from __future__ import annotations

import importlib.util
import sys
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any, ClassVar, Union

from squall.components import DEFAULT_STREAM, Component, Spout
from squall.structure import (
    ALL,
    DIRECT,
    FIELDS,
    GLOBAL,
    LOCAL_OR_SHUFFLE,
    NONE,
    SHUFFLE,
    ComponentInfo,
    GroupingSpec,
    InputSpec,
    TopologyStructure,
    structure_to_thrift,
)
from squall.validation import invalid


class Grouping:
    """How a bolt's input stream is split among the bolt's tasks."""

    shuffle = GroupingSpec(SHUFFLE)
    all = GroupingSpec(ALL)
    global_ = GroupingSpec(GLOBAL)
    none = GroupingSpec(NONE)
    direct = GroupingSpec(DIRECT)
    local_or_shuffle = GroupingSpec(LOCAL_OR_SHUFFLE)

    @staticmethod
    def fields(*names: str) -> GroupingSpec:
        return GroupingSpec(FIELDS, tuple(names))


InputKey = Union["ComponentSpec", str, tuple[Union["ComponentSpec", str], str]]
InputsArg = Mapping[InputKey, GroupingSpec] | Sequence[InputKey] | None


@dataclass(frozen=True)
class ComponentSpec:
    component: type[Component]
    name: str | None
    inputs: tuple[tuple[Any, str, GroupingSpec], ...]  # (source spec or name, stream, grouping)
    par: int
    config: dict[str, Any] = field(default_factory=dict)
    kwargs: dict[str, Any] = field(default_factory=dict)
    outputs: dict[str, list[str]] | None = None  # a shell component's; else the class's

    @staticmethod
    def create(component, name, inputs, par, config, kwargs) -> ComponentSpec:
        if inputs is None:
            pairs: list[tuple[Any, GroupingSpec]] = []
        elif isinstance(inputs, Mapping):
            pairs = list(inputs.items())
        else:
            pairs = [(key, Grouping.shuffle) for key in inputs]
        normalized = []
        for key, grouping in pairs:
            source, stream = key if isinstance(key, tuple) else (key, DEFAULT_STREAM)
            normalized.append((source, stream, grouping))
        return ComponentSpec(component, name, tuple(normalized), par, config or {}, kwargs)

    def set_memory_load(self, onheap_mb: float) -> ComponentSpec:
        """Storm's setMemoryLoad: on-heap MB per task, for the resource-aware scheduler."""
        key = "topology.component.resources.onheap.memory.mb"
        return replace(self, config={**self.config, key: onheap_mb})

    def set_cpu_load(self, pcore_percent: float) -> ComponentSpec:
        """Storm's setCPULoad: percent of one core per task (100 = a whole core)."""
        key = "topology.component.cpu.pcore.percent"
        return replace(self, config={**self.config, key: pcore_percent})

    def set_generic_resource(self, name: str, amount: float) -> ComponentSpec:
        """Storm's addResource: a generic resource each task needs ({"gpu.count": 1}), kept in
        topology.component.resources.map; it lands only on supervisors whose
        supervisor.resources.map offers it (docs/scheduling.md)."""
        key = "topology.component.resources.map"
        declared = {**self.config.get(key, {}), name: amount}
        return replace(self, config={**self.config, key: declared})

    def __hash__(self) -> int:
        return id(self)

    def __eq__(self, other: object) -> bool:
        return self is other


def _module_name(cls: type) -> str:
    module = cls.__module__
    if module == "__main__":
        main_file = getattr(sys.modules["__main__"], "__file__", None)
        if main_file:
            return Path(main_file).stem
    return module


def _outputs(spec: ComponentSpec) -> dict[str, list[str]]:
    return spec.outputs if spec.outputs is not None else spec.component.output_streams()


class TopologyMeta(type):
    def __new__(mcs, name, bases, namespace):
        cls = super().__new__(mcs, name, bases, namespace)
        specs: dict[str, ComponentSpec] = {}
        for base in reversed(cls.__mro__[1:]):
            specs.update(getattr(base, "specs", {}))
        named: dict[ComponentSpec, str] = {}
        for attr, value in namespace.items():
            if isinstance(value, ComponentSpec):
                component_name = value.name or attr
                if value in named:
                    raise invalid(
                        f"{name}: one component spec is declared twice, as "
                        f"{named[value]!r} and {component_name!r}"
                    )
                if component_name in named.values():
                    raise invalid(f"{name}: two components are named {component_name!r}")
                named[value] = component_name
        for spec, component_name in named.items():
            inputs = tuple(
                (named.get(src, src) if isinstance(src, ComponentSpec) else src, stream, g)
                for src, stream, g in spec.inputs
            )
            specs[component_name] = replace(spec, name=component_name, inputs=inputs)
        cls.specs = specs
        return cls


class Topology(metaclass=TopologyMeta):
    """Subclass and declare components as class attributes. `config` is the topology conf."""

    specs: ClassVar[dict[str, ComponentSpec]]
    config: ClassVar[dict[str, Any]] = {}
    name: ClassVar[str | None] = None

    @classmethod
    def structure(cls) -> TopologyStructure:
        components = {}
        for component_name, spec in sorted(cls.specs.items()):
            inputs = tuple(
                InputSpec(
                    # a spec not attached to this topology keeps no name; validation says so
                    source.name or "<unnamed>" if isinstance(source, ComponentSpec) else source,
                    stream,
                    grouping,
                )
                for source, stream, grouping in spec.inputs
            )
            components[component_name] = ComponentInfo(
                name=component_name,
                kind="spout" if issubclass(spec.component, Spout) else "bolt",
                module_name=_module_name(spec.component),
                class_name=spec.component.__qualname__,
                kwargs=spec.kwargs,
                parallelism=spec.par,
                inputs=inputs,
                streams={s: tuple(f) for s, f in _outputs(spec).items()},
                conf=spec.config,
            )
        return TopologyStructure(components)

    @classmethod
    def to_thrift(cls) -> Any:
        return structure_to_thrift(cls.structure())


class TopologyFileError(ValueError):
    """A topology file cannot be loaded or does not define exactly one Topology."""


def load_topology_file(path: str | Path) -> type[Topology]:
    """Import a topology file as the module its workers will import (its file stem)."""
    from squall import thrift_api as T

    path = Path(path).resolve()
    if not path.is_file():
        raise TopologyFileError(f"no such topology file: {path}")
    module_name = path.stem
    spec = importlib.util.spec_from_file_location(module_name, path)
    if spec is None or spec.loader is None:
        raise TopologyFileError(f"{path} is not a Python file")
    module = importlib.util.module_from_spec(spec)
    sys.modules[module_name] = module
    sys.path.insert(0, str(path.parent))
    try:
        spec.loader.exec_module(module)
    except T.InvalidTopologyException:
        raise  # the topology's own problem, already said in its words
    except Exception as exc:
        raise TopologyFileError(f"{path}: {type(exc).__name__}: {exc}") from exc
    found = [
        v
        for v in vars(module).values()
        if isinstance(v, type)
        and issubclass(v, Topology)
        and v is not Topology
        and v.__module__ == module_name
    ]
    if len(found) != 1:
        names = ", ".join(t.__name__ for t in found) or "none"
        raise TopologyFileError(f"{path} must define exactly one Topology subclass (found {names})")
    return found[0]
