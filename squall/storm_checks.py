"""Storm's ConfigValidation, for the checks named in squall/storm_keys.py.

A Storm key squall does not implement is still type-checked as Storm would (Storm refuses a
wrong type at submit or daemon start), so a conf that squall accepts would also start on
Storm. Java's types map to what YAML and JSON give Python: Number is int or float (never
bool), Map is dict, Iterable is list. Each check passes null, as Storm's do, except
`not-null`. Storm's @IsImplementationOfClass also loads the class: squall has no classpath,
so it checks for a string only.
"""

from __future__ import annotations

import functools
from collections.abc import Callable
from typing import Any

INT_MIN, INT_MAX = -(2**31), 2**31 - 1
LONG_MIN, LONG_MAX = -(2**63), 2**63 - 1

Check = Callable[[Any], str | None]  # the problem with a non-null value, or None


def _number(value: Any) -> bool:
    return isinstance(value, (int, float)) and not isinstance(value, bool)


def _whole(value: Any, low: int, high: int) -> bool:
    """Storm's IntegerValidator/LongValidator: a Number whose long value equals its double
    value (3 and 3.0 pass, 3.5 does not), within the Java type's range."""
    if not _number(value):
        return False
    if isinstance(value, float) and (value != value or value in (float("inf"), float("-inf"))):
        return False
    return int(value) == value and low <= int(value) <= high


def _is(kind: type, wanted: str) -> Check:
    def check(value: Any) -> str | None:
        return None if isinstance(value, kind) else f"must be {wanted}"

    return check


def _integer(value: Any) -> str | None:
    return None if _whole(value, INT_MIN, INT_MAX) else "must be a whole number (32-bit)"


def _long(value: Any) -> str | None:
    return None if _whole(value, LONG_MIN, LONG_MAX) else "must be a whole number (64-bit)"


def _positive(value: Any) -> str | None:
    return None if _number(value) and value > 0 else "must be a number greater than 0"


def _positive_or_zero(value: Any) -> str | None:
    return None if _number(value) and value >= 0 else "must be a number of at least 0"


def _number_check(value: Any) -> str | None:
    return None if _number(value) else "must be a number"


def _strings(value: Any) -> bool:
    return isinstance(value, list) and all(v is None or isinstance(v, str) for v in value)


def _string_list(value: Any) -> str | None:
    return None if _strings(value) else "must be a list of strings"


def _string_or_list(value: Any) -> str | None:
    ok = isinstance(value, str) or _strings(value)
    return None if ok else "must be a string or a list of strings"


def _no_duplicates(value: Any) -> str | None:
    if not isinstance(value, list):
        return "must be a list"
    seen: list[Any] = []
    for item in value:
        if item in seen:
            return f"must not list {item!r} twice"
        seen.append(item)
    return None


def _kryo(value: Any) -> str | None:
    if not isinstance(value, list):
        return "must be a list of class names or {class: serializer} maps"
    for item in value:
        if isinstance(item, dict):
            if not all(isinstance(k, str) and isinstance(v, str) for k, v in item.items()):
                return "must be a list of class names or {class: serializer} maps of strings"
        elif not isinstance(item, str):
            return "must be a list of class names or {class: serializer} maps"
    return None


_TYPES: dict[str, tuple[Callable[[Any], bool], str]] = {
    "string": (lambda v: isinstance(v, str), "strings"),
    "number": (_number, "numbers"),
    "map": (lambda v: isinstance(v, dict), "maps"),
}


def _map_of(key_type: str, value_type: str) -> Check:
    key_ok, key_name = _TYPES[key_type]
    value_ok, value_name = _TYPES[value_type]

    def check(value: Any) -> str | None:
        if not isinstance(value, dict):
            return f"must be a map of {key_name} to {value_name}"
        for k, v in value.items():
            if not (k is None or key_ok(k)) or not (v is None or value_ok(v)):
                return f"must be a map of {key_name} to {value_name}"
        return None

    return check


def _has_class(value: Any, *required: str) -> str | None:
    if not isinstance(value, dict):
        return "must be a map"
    for key in ("class", *required):
        if key not in value:
            return f"must have the entry {key!r}"
    if value["class"] is not None and not isinstance(value["class"], str):
        return "must have a string 'class'"
    return None


def _metric_registry(value: Any) -> str | None:
    problem = _has_class(value, "parallelism.hint")
    if problem or value["parallelism.hint"] is None:
        return problem
    return (
        None
        if _whole(value["parallelism.hint"], INT_MIN, INT_MAX)
        else ("must have a whole number 'parallelism.hint'")
    )


def _cluster_metric_registry(value: Any) -> str | None:
    return _has_class(value)


def _metric_reporter(value: Any) -> str | None:
    problem = _has_class(value)
    if problem:
        return problem
    filter_ = value.get("filter")
    if filter_ is not None:
        if not isinstance(filter_, dict):
            return "must have a map 'filter'"
        if filter_.get("class") is not None and not isinstance(filter_["class"], str):
            return "must have a string 'class' in its 'filter'"
    return None


def _event_logger_registry(value: Any) -> str | None:
    problem = _has_class(value)
    if problem:
        return problem
    arguments = value.get("arguments")
    return None if arguments is None or isinstance(arguments, dict) else "must have map 'arguments'"


def _impersonation_acl_user(value: Any) -> str | None:
    if not isinstance(value, dict) or not all(
        isinstance(k, str) and (v is None or _strings(v)) for k, v in value.items()
    ):
        return "must be a map of strings to lists of strings"
    missing = [k for k in ("hosts", "groups") if k not in value]
    return f"must have the entry {missing[0]!r}" if missing else None


def _numa_entry(value: Any) -> str | None:
    if not isinstance(value, dict):
        return "must be a map"
    missing = [k for k in ("numa.cores", "numa.memory.mb", "numa.ports") if k not in value]
    if missing:
        return f"must have the entry {missing[0]!r}"
    cores = value["numa.cores"]
    if not isinstance(cores, list):
        return "must have a list 'numa.cores'"
    if len({repr(c) for c in cores}) != len(cores):
        return "must not list a core twice in 'numa.cores'"
    return None


def _user_resource_pool(value: Any) -> str | None:
    if not isinstance(value, dict):
        return "must be a map"
    for key in ("cpu", "memory"):
        if key not in value:
            return f"must have the entry {key!r}"
        if value[key] is not None and not _number(value[key]):
            return f"must have a number {key!r}"
    return None


def _list_of_string_lists(value: Any) -> str | None:
    ok = isinstance(value, list) and all(
        isinstance(e, list) and all(isinstance(s, str) for s in e) for e in value
    )
    return None if ok else "must be a list of lists of strings"


def _ras_constraints(value: Any) -> str | None:
    if not isinstance(value, dict):
        return "must be a map of components to constraints"
    for component, constraints in value.items():
        if not isinstance(constraints, dict):
            return f"must map component {component!r} to a map of constraints"
        for kind, setting in constraints.items():
            if kind == "maxNodeCoLocationCnt":
                try:
                    int(str(setting))
                except ValueError:
                    return f"component {component!r}: maxNodeCoLocationCnt must be a number"
            elif kind == "incompatibleComponents":
                if isinstance(setting, list) and not all(isinstance(s, str) for s in setting):
                    return f"component {component!r}: incompatibleComponents must be names"
            else:
                return f"component {component!r}: unsupported constraint {kind!r}"
    return None


def _map_of_string_to_map(value: Any) -> str | None:
    ok = isinstance(value, dict) and all(
        (k is None or isinstance(k, str))
        and isinstance(v, dict)
        and all(isinstance(kk, str) for kk in v)
        for k, v in value.items()
    )
    return None if ok else "must be a map of strings to maps"


def _pacemaker_auth(value: Any) -> str | None:
    return None if value in ("NONE", "DIGEST", "KERBEROS") else "must be NONE, DIGEST or KERBEROS"


CHECKS: dict[str, Check] = {
    "string": _is(str, "a string"),
    "boolean": _is(bool, "a boolean"),
    "number": _number_check,
    "integer": _integer,
    "long": _long,
    "positive": _positive,
    "positive-or-zero": _positive_or_zero,
    "string-list": _string_list,
    "string-or-string-list": _string_or_list,
    "no-duplicates": _no_duplicates,
    "kryo-registrations": _kryo,
    "class-name": _is(str, "a class name (a string)"),
    "map": _is(dict, "a map"),
    "metric-registry": _metric_registry,
    "cluster-metric-registry": _cluster_metric_registry,
    "metric-reporter": _metric_reporter,
    "event-logger-registry": _event_logger_registry,
    "impersonation-acl-user": _impersonation_acl_user,
    "numa-entry": _numa_entry,
    "user-resource-pool": _user_resource_pool,
    "list-of-string-lists": _list_of_string_lists,
    "ras-constraints": _ras_constraints,
    "map-of-string-to-map": _map_of_string_to_map,
    "pacemaker-auth": _pacemaker_auth,
}
NO_OPS = ("deprecated",)


def _each(names: list[str]) -> Check:
    checks = [CHECKS[n] for n in names]

    def check(value: Any) -> str | None:
        if not isinstance(value, list):
            return "must be a list"
        for entry in value:
            for one in checks:
                problem = None if entry is None else one(entry)
                if problem:
                    return f"list entry {entry!r} {problem}"
        return None

    return check


def _values(names: list[str]) -> Check:
    checks = [CHECKS[n] for n in names]

    def check(value: Any) -> str | None:
        if not isinstance(value, dict):
            return "must be a map"
        for key, entry in value.items():
            if key is not None and not isinstance(key, str):
                return f"key {key!r} must be a string"
            for one in checks:
                problem = None if entry is None else one(entry)
                if problem:
                    return f"entry {key!r} {problem}"
        return None

    return check


def _one_of(names: list[str]) -> Check:
    checks = [CHECKS[n] for n in names]

    def check(value: Any) -> str | None:
        passed = [n for n, one in zip(names, checks, strict=True) if one(value) is None]
        if len(passed) == 1:
            return None
        if passed:
            return f"must match exactly one of {', '.join(names)}"
        return f"must be one of: {', '.join(names)}"

    return check


def _string_in(accepted: list[str]) -> Check:
    def check(value: Any) -> str | None:
        if value in accepted:
            return None
        return f"must be one of {', '.join(accepted)}"

    return check


@functools.cache
def compile_check(name: str) -> Check | None:
    """The check a name in squall/storm_keys.py stands for (None for 'not-null', handled by
    `problem`, and for the annotations that check nothing)."""
    if name in NO_OPS or name == "not-null":
        return None
    kind, _, arg = name.partition(":")
    if name.startswith("string="):
        return _string_in(name.removeprefix("string=").split("|"))
    if kind == "map" and arg:
        key_type, _, value_type = arg.partition("->")
        return _map_of(key_type, value_type)
    if kind == "each":
        return _each(arg.split("+"))
    if kind == "values":
        return _values(arg.split("+"))
    if kind == "one-of":
        return _one_of(arg.split("|"))
    if name in CHECKS:
        return CHECKS[name]
    raise KeyError(f"no Storm check named {name!r}")


def problem(checks: tuple[str, ...], value: Any) -> str | None:
    """What is wrong with `value` for a key with Storm's `checks`, or None, in Storm's order.
    Storm validates a key only where a conf holds it; null fails only 'not-null'."""
    if value is None:
        return "must not be null" if "not-null" in checks else None
    for name in checks:
        check = compile_check(name)
        found = check(value) if check else None
        if found:
            return found
    return None
