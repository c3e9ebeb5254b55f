"""Checks on everything a client can send: topology names and StormTopology structs.

Every failure is an InvalidTopologyException whose message names the component and says what
is wrong, so `squall submit` can show it as is.
"""

from __future__ import annotations

import json
import re
import shlex
from collections.abc import Iterable
from typing import Any

from squall import config as config_mod
from squall.structure import (
    ALL,
    DIRECT,
    FIELDS,
    GLOBAL,
    LOCAL_OR_SHUFFLE,
    NONE,
    SHELL_BOLT,
    SHELL_MODULE,
    SHELL_SPOUT,
    SHUFFLE,
    ComponentInfo,
    GroupingSpec,
    InputSpec,
    TopologyStructure,
)

MAX_NAME_LENGTH = 100
MAX_PARALLELISM = 10_000
MAX_SHELL_CHARS = 4096
MAX_TASK_PARALLELISM = "topology.max.task.parallelism"
TOPOLOGY_NAME = "topology.name"  # nimbus sets it at submit, as Storm's
_NAME = re.compile(r"[A-Za-z0-9][A-Za-z0-9_.-]*")
_FIELD = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")
_DOTTED = re.compile(r"[A-Za-z_][A-Za-z0-9_]*(\.[A-Za-z_][A-Za-z0-9_]*)*")


def invalid(msg: str) -> Exception:
    """Storm's InvalidTopologyException (its Thrift binding imported here, not by every
    worker that checks a name: structure.py says why)."""
    from squall.thrift_api import InvalidTopologyException

    return InvalidTopologyException(msg=msg)


def name_problem(name: Any, what: str = "topology name") -> str | None:
    """Why `name` cannot name a topology (or component), or None if it can.

    Names become ZooKeeper path elements and directory names, so they are held to a small,
    safe alphabet: no '/', no '..', no control characters, bounded length."""
    if not isinstance(name, str) or not name:
        return f"{what} must be a non-empty string"
    if len(name) > MAX_NAME_LENGTH:
        return f"{what} is longer than {MAX_NAME_LENGTH} characters"
    if ".." in name or not _NAME.fullmatch(name):
        return (
            f"{what} {name!r} may only contain letters, digits, '_', '-' and '.', "
            "must start with a letter or digit, and may not contain '..'"
        )
    return None


def check_topology_name(name: Any) -> str:
    problem = name_problem(name)
    if problem:
        raise invalid(problem)
    return name


def check_name_free(name: str, running: Iterable[tuple[str, str]]) -> None:
    """Refuse a name already in use by a running topology, as its name or as its id (killing
    by a name equal to another's id would kill the other). `running`: (name, id) pairs."""
    for other_name, other_id in running:
        if name == other_name:
            from squall.thrift_api import AlreadyAliveException

            raise AlreadyAliveException(msg=f"topology {name!r} is already alive")
        if name == other_id:
            raise invalid(f"topology name {name!r} is the id of a running topology; choose another")


def _grouping(component: str, source: str, stream: str, g: Any) -> GroupingSpec:
    where = f"component {component!r}: input from {source!r} stream {stream!r}"
    if g is None:
        raise invalid(f"{where} has no grouping")
    chosen = [k for k, v in vars(g).items() if v is not None]
    if len(chosen) != 1:
        raise invalid(f"{where} must set exactly one grouping, got {chosen or 'none'}")
    kind = chosen[0]
    if kind == "fields":
        if not g.fields:
            return GroupingSpec(GLOBAL)
        return GroupingSpec(FIELDS, tuple(g.fields))
    if kind in (SHUFFLE, ALL, NONE, DIRECT, LOCAL_OR_SHUFFLE):
        return GroupingSpec(kind)
    raise invalid(f"{where} uses a {kind} grouping, which squall does not support")


def _component(name: str, kind: str, obj: Any, common: Any) -> ComponentInfo:
    problem = name_problem(name, "component name")
    if problem:
        raise invalid(problem)
    if obj is None or common is None:
        raise invalid(f"component {name!r} is missing its object or common part")
    if obj.shell is not None and obj.python_object is None:
        module_name, class_name, kwargs = _shell(name, kind, obj.shell)
    elif obj.python_object is None:
        other = next((k for k, v in vars(obj).items() if v is not None), "nothing")
        raise invalid(
            f"component {name!r} is a {other} component; squall runs Python components "
            "(ComponentObject.python_object) and shell components (ComponentObject.shell)"
        )
    else:
        py = obj.python_object
        if not isinstance(py.module_name, str) or not _DOTTED.fullmatch(py.module_name):
            raise invalid(f"component {name!r}: module name {py.module_name!r} is not importable")
        if not isinstance(py.class_name, str) or not _DOTTED.fullmatch(py.class_name):
            raise invalid(f"component {name!r}: class name {py.class_name!r} is not valid")
        module_name, class_name = py.module_name, py.class_name
        kwargs = _json_object(name, "kwargs", py.kwargs_json or "{}")
    par = common.parallelism_hint if common.parallelism_hint is not None else 1
    if not isinstance(par, int) or isinstance(par, bool) or not 1 <= par <= MAX_PARALLELISM:
        raise invalid(
            f"component {name!r}: parallelism must be a whole number from 1 to "
            f"{MAX_PARALLELISM}, got {par!r}"
        )
    streams: dict[str, tuple[str, ...]] = {}
    for stream, info in (common.streams or {}).items():
        if name_problem(stream, "stream id") or info is None:
            raise invalid(f"component {name!r}: stream id {stream!r} is not valid")
        fields = tuple(info.output_fields or ())
        for f in fields:
            if not isinstance(f, str) or not _FIELD.fullmatch(f):
                raise invalid(f"component {name!r}: stream {stream!r} field {f!r} is not valid")
        if len(set(fields)) != len(fields):
            raise invalid(f"component {name!r}: stream {stream!r} declares a field twice")
        streams[stream] = fields
    inputs = tuple(
        InputSpec(
            gsid.componentId,
            gsid.streamId,
            _grouping(name, gsid.componentId, gsid.streamId, g),
        )
        for gsid, g in sorted(
            (common.inputs or {}).items(), key=lambda kv: (kv[0].componentId, kv[0].streamId)
        )
    )
    if kind == "spout" and inputs:
        raise invalid(f"spout {name!r} cannot have inputs")
    conf = _json_object(name, "conf", common.json_conf or "{}")
    conf = _checked_conf(conf, f"component {name!r} conf")
    return ComponentInfo(name, kind, module_name, class_name, kwargs, par, inputs, streams, conf)


def _shell(name: str, kind: str, shell: Any) -> tuple[str, str, dict[str, Any]]:
    """A Storm ShellComponent (what streamparse builds) as squall's shell spout or bolt:
    `execution_command script`, run in the code package's resources directory."""
    command, script = shell.execution_command, shell.script
    if not isinstance(command, str) or not command.strip() or "\0" in command:
        raise invalid(f"component {name!r}: a shell component needs an execution_command")
    if script is None:
        script = ""
    if not isinstance(script, str) or "\0" in script:
        raise invalid(f"component {name!r}: the shell component's script must be a string")
    if len(command) + len(script) > MAX_SHELL_CHARS:
        raise invalid(
            f"component {name!r}: execution_command and script are longer than "
            f"{MAX_SHELL_CHARS} characters"
        )
    try:
        shlex.split(command)
        shlex.split(script)
    except ValueError as exc:
        raise invalid(f"component {name!r}: cannot split the shell command: {exc}") from exc
    class_name = SHELL_SPOUT if kind == "spout" else SHELL_BOLT
    return SHELL_MODULE, class_name, {"execution_command": command, "script": script}


def json_text(value: Any, what: str) -> str:
    """`value` as JSON, or InvalidTopologyException naming the first key that cannot be."""
    try:
        return json.dumps(value)
    except (TypeError, ValueError) as exc:
        if isinstance(value, dict):
            for key, item in value.items():
                json_text(item, f"{what}: {key}")
        raise invalid(f"{what} cannot be sent as JSON: {exc}") from exc


def _json_object(component: str, what: str, text: str) -> dict[str, Any]:
    try:
        value = json.loads(text)
    except (TypeError, ValueError, RecursionError) as exc:
        raise invalid(f"component {component!r}: {what} is not valid JSON: {exc}") from exc
    if not isinstance(value, dict):
        raise invalid(f"component {component!r}: {what} must be a JSON object")
    if too_deep(value):
        raise invalid(f"component {component!r}: {what} nests deeper than {MAX_NESTING}")
    return value


def _check_inputs(structure: TopologyStructure) -> None:
    for c in structure.components.values():
        for i in c.inputs:
            where = f"component {c.name!r}: input from {i.component!r}"
            source = structure.components.get(i.component)
            if source is None:
                raise invalid(f"{where}, which is not a component of this topology")
            if i.stream not in source.streams:
                declared = ", ".join(sorted(source.streams)) or "none"
                raise invalid(
                    f"{where} stream {i.stream!r}, which {i.component!r} does not declare "
                    f"(it declares: {declared})"
                )
            missing = [f for f in i.grouping.fields if f not in source.streams[i.stream]]
            if missing:
                declared = ", ".join(source.streams[i.stream]) or "none"
                raise invalid(
                    f"{where} groups by field {missing[0]!r}, which stream {i.stream!r} does "
                    f"not declare (it declares: {declared})"
                )


def validate_topology(topology: Any) -> TopologyStructure:
    """Turn a client's StormTopology into a TopologyStructure, or raise naming the problem."""
    if topology is None:
        raise invalid("no topology given")
    if topology.state_spouts:
        raise invalid("state spouts are not supported")
    spouts = topology.spouts or {}
    bolts = topology.bolts or {}
    if not spouts:
        raise invalid("a topology needs at least one spout")
    both = set(spouts) & set(bolts)
    if both:
        raise invalid(f"component {sorted(both)[0]!r} is declared as both spout and bolt")
    components = {}
    for name, spec in sorted(spouts.items()):
        components[name] = _component(name, "spout", spec.spout_object, spec.common)
    for name, spec in sorted(bolts.items()):
        components[name] = _component(name, "bolt", spec.bolt_object, spec.common)
    structure = TopologyStructure(components)
    _check_inputs(structure)
    return structure


def validate_topology_conf(json_conf: str | None) -> dict[str, Any]:
    """The topology conf to store: checked, its cluster settings left out."""
    return review_topology_conf(json_conf).conf


def check_topology_setting(key: str, value: Any) -> None:
    """`config set` on a running topology: the one key, checked as in a topology conf. A
    cluster setting or a likely typo is refused here, not dropped or warned of: setting that
    key is all the call asks, and its caller hears nothing but the refusal."""
    if isinstance(key, str) and config_mod.is_cluster_key(key):
        raise invalid(f"{key} is a cluster setting; a topology cannot set it")
    if key == TOPOLOGY_NAME:
        raise invalid(f"{TOPOLOGY_NAME} is the name the topology was submitted under")
    found = review_topology_conf(json.dumps({key: value}))
    for typo, known in found.suggestions:
        raise invalid(f"unknown setting {typo}: did you mean {known}?")


def review_topology_conf(json_conf: str | None) -> config_mod.Review:
    """The topology conf checked, and what to say about it (squall/config.py `review`)."""
    try:
        conf = json.loads(json_conf or "{}")
    except (TypeError, ValueError, RecursionError) as exc:
        raise invalid(f"topology conf is not valid JSON: {exc}") from exc
    return _reviewed_conf(conf, "topology conf")


def conf_reviews(name: str, topology: Any, json_conf: str | None) -> tuple[config_mod.Review, ...]:
    """What to tell the submitter of topology `name` about its conf and each component's:
    the Storm keys ignored, the likely typos, the cluster settings left out. For a topology
    that `validate_topology` and `validate_topology_conf` passed."""
    reviews = [_reviewed_conf(json.loads(json_conf or "{}"), f"topology {name!r} conf")]
    for specs in (topology.spouts, topology.bolts):
        for component, spec in sorted((specs or {}).items()):
            conf = json.loads(spec.common.json_conf or "{}")
            where = f"topology {name!r} component {component!r} conf"
            reviews.append(_reviewed_conf(conf, where))
    return tuple(r for r in reviews if r.messages())


def cap_parallelism(structure: TopologyStructure, conf: dict[str, Any]) -> TopologyStructure:
    """Each component's parallelism at most topology.max.task.parallelism, the component's
    own conf over the topology's (Storm's ServerUtils.getComponentParallelism, applied by
    nimbus at submit). Storm caps the task count; squall runs one task per executor."""
    counts = {}
    for name, component in structure.components.items():
        limit = {**conf, **component.conf}.get(MAX_TASK_PARALLELISM)
        if limit is not None and int(limit) < component.parallelism:
            counts[name] = int(limit)
    return structure.with_parallelism(counts) if counts else structure


MAX_NESTING = 32  # lists and maps in a conf, the conf itself counted


def too_deep(value: Any, limit: int = MAX_NESTING) -> bool:
    """Whether lists and maps in `value` nest deeper than `limit` (walked without recursion).
    A conf that json.loads took near Python's recursion limit failed later, wherever a
    deeper stack parsed or dumped it again (nimbus's store, a supervisor's fetch)."""
    stack = [(value, 1)]
    while stack:
        item, depth = stack.pop()
        if isinstance(item, (list, dict)):
            if depth > limit:
                return True
            stack.extend((child, depth + 1) for child in _children(item))
    return False


def _children(item: list[Any] | dict[Any, Any]) -> Iterable[Any]:
    return item.values() if isinstance(item, dict) else item


def _checked_conf(conf: Any, source: str) -> dict[str, Any]:
    return _reviewed_conf(conf, source).conf


def _reviewed_conf(conf: Any, source: str) -> config_mod.Review:
    """Known keys with values of the right type and size; cluster-only keys left out."""
    if too_deep(conf):
        raise invalid(f"{source} nests lists and maps deeper than {MAX_NESTING}")
    try:
        return config_mod.review(conf, config_mod.load_defaults(), source, topology=True)
    except config_mod.ConfigError as exc:
        raise invalid(str(exc)) from exc
