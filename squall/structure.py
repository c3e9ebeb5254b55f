"""The validated shape of a topology as plain data: what nimbus stores and workers run.

Built from a StormTopology by `squall.validation.validate_topology`; JSON round-trips so the
same structure travels through the code store and ZooKeeper-free worker start-up.

The Thrift binding (squall.thrift_api) is imported only where a structure becomes Thrift:
loading it parses the IDL, 0.15 s of every worker's start, and workers never speak Thrift.
"""

from __future__ import annotations

import json
from dataclasses import asdict, dataclass, replace
from typing import Any

ACKER = "__acker"  # the system component that tracks tuple trees (worker/acking.py)
# Storm's ShellComponent runs as one of these (squall/shell_components.py), its kwargs the
# ShellComponent's fields; getTopology gives it back as the ShellComponent it was.
SHELL_MODULE, SHELL_SPOUT, SHELL_BOLT = "squall.shell_components", "ShellSpout", "ShellBolt"

# Groupings, as Storm names them.
SHUFFLE, FIELDS, ALL, GLOBAL, NONE, DIRECT, LOCAL_OR_SHUFFLE = (
    "shuffle",
    "fields",
    "all",
    "global",
    "none",
    "direct",
    "local_or_shuffle",
)


@dataclass(frozen=True)
class GroupingSpec:
    kind: str
    fields: tuple[str, ...] = ()

    def to_thrift(self) -> Any:
        from squall import thrift_api as T

        if self.kind == FIELDS:
            return T.Grouping(fields=list(self.fields))
        if self.kind == GLOBAL:
            return T.Grouping(fields=[])
        return T.Grouping(**{self.kind: T.NullStruct()})


@dataclass(frozen=True)
class InputSpec:
    component: str
    stream: str
    grouping: GroupingSpec


@dataclass(frozen=True)
class ComponentInfo:
    name: str
    kind: str  # "spout" or "bolt"
    module_name: str
    class_name: str
    kwargs: dict[str, Any]
    parallelism: int
    inputs: tuple[InputSpec, ...]
    streams: dict[str, tuple[str, ...]]
    conf: dict[str, Any]


@dataclass(frozen=True)
class TopologyStructure:
    components: dict[str, ComponentInfo]

    def task_counts(self) -> dict[str, int]:
        return {name: c.parallelism for name, c in self.components.items()}

    def spouts(self) -> frozenset[str]:
        """The names of the components declared as spouts."""
        return frozenset(name for name, c in self.components.items() if c.kind == "spout")

    def with_parallelism(self, counts: dict[str, int]) -> TopologyStructure:
        return TopologyStructure(
            {
                name: replace(c, parallelism=counts.get(name, c.parallelism))
                for name, c in self.components.items()
            }
        )

    def consumers(self, component: str, stream: str) -> list[tuple[str, GroupingSpec]]:
        """Who subscribes to `component`'s `stream`, and with which grouping (sorted)."""
        return sorted(
            (c.name, i.grouping)
            for c in self.components.values()
            for i in c.inputs
            if i.component == component and i.stream == stream
        )

    def to_json(self) -> dict[str, Any]:
        return {name: asdict(c) for name, c in sorted(self.components.items())}

    @staticmethod
    def from_json(data: dict[str, Any]) -> TopologyStructure:
        components = {}
        for name, c in data.items():
            inputs = tuple(
                InputSpec(
                    i["component"],
                    i["stream"],
                    GroupingSpec(i["grouping"]["kind"], tuple(i["grouping"]["fields"])),
                )
                for i in c["inputs"]
            )
            streams = {s: tuple(f) for s, f in c["streams"].items()}
            components[name] = ComponentInfo(
                **{**c, "inputs": inputs, "streams": streams}  # type: ignore[arg-type]
            )
        return TopologyStructure(components)


def assign_task_ids(counts: dict[str, int]) -> dict[int, str]:
    """Task ids 1..N, dealt to components in sorted name order (Storm's numbering)."""
    tasks: dict[int, str] = {}
    next_id = 1
    for name in sorted(counts):
        for _ in range(counts[name]):
            tasks[next_id] = name
            next_id += 1
    return tasks


def structure_to_thrift(structure: TopologyStructure) -> Any:
    """The StormTopology a client would have sent for this structure (getTopology)."""
    from squall import thrift_api as T

    spouts, bolts = {}, {}
    for name, c in sorted(structure.components.items()):
        common = T.ComponentCommon(
            inputs={
                T.GlobalStreamId(componentId=i.component, streamId=i.stream): (
                    i.grouping.to_thrift()
                )
                for i in c.inputs
            },
            streams={
                s: T.StreamInfo(output_fields=list(f), direct=False) for s, f in c.streams.items()
            },
            parallelism_hint=c.parallelism,
            json_conf=json.dumps(c.conf),
        )
        if c.module_name == SHELL_MODULE and c.class_name in (SHELL_SPOUT, SHELL_BOLT):
            obj = T.ComponentObject(shell=T.ShellComponent(**c.kwargs))
        else:
            obj = T.ComponentObject(
                python_object=T.PythonComponent(
                    module_name=c.module_name,
                    class_name=c.class_name,
                    kwargs_json=json.dumps(c.kwargs),
                )
            )
        if c.kind == "spout":
            spouts[name] = T.SpoutSpec(spout_object=obj, common=common)
        else:
            bolts[name] = T.Bolt(bolt_object=obj, common=common)
    return T.StormTopology(spouts=spouts, bolts=bolts, state_spouts={})
