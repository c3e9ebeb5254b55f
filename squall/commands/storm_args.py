"""The argument shapes of Storm's CLI verbs, parsed as Storm's command classes parse them
(org.apache.storm.command.*): pure functions from the strings a user typed to the Thrift
values nimbus takes, each refusal a StormArgError naming what is wrong."""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping, Sequence
from typing import Any

from squall import thrift_api as T
from squall.log_config import LEVELS, REMOVE, UPDATE

READ, WRITE, ADMIN = 1, 2, 4  # Storm's BlobStoreAclHandler access bits


class StormArgError(ValueError):
    """An argument that does not have the shape Storm's CLI asks for."""


def log_setting(value: str) -> tuple[str, Any]:
    """`-l LOGGER=LEVEL[:TIMEOUT]` (SetLogLevel's LogLevelsParser): the logger and its
    UPDATE LogLevel; no timeout is 0, for good."""
    name, sep, rest = value.partition("=")
    if not sep or not name or "=" in rest:
        raise StormArgError(f"{value!r}: should be LOGGER=LEVEL[:TIMEOUT], e.g. ROOT=DEBUG:30")
    level, colon, timeout = rest.partition(":")
    if level.strip().upper() not in LEVELS:
        raise StormArgError(f"{value!r}: {level!r} is not one of {', '.join(LEVELS)}")
    if colon and not re.fullmatch(r"\d+", timeout):
        raise StormArgError(f"{value!r}: the timeout {timeout!r} is not whole seconds")
    return name, T.LogLevel(
        action=UPDATE,
        target_log_level=level.strip().upper(),
        reset_log_level_timeout_secs=int(timeout) if colon else 0,
    )


def log_config(updates: Iterable[str], removals: Iterable[str]) -> Any:
    """Storm's LogConfig for `-l` settings and `-r` loggers (a removal wins, as in Storm,
    whose map takes the -r entries last)."""
    named = dict(log_setting(value) for value in updates)
    for name in removals:
        if not name:
            raise StormArgError("-r needs a logger name")
        named[name] = T.LogLevel(action=REMOVE)
    if not named:
        raise StormArgError("give at least one -l LOGGER=LEVEL[:TIMEOUT] or -r LOGGER")
    return T.LogConfig(named_logger_level=named)


def access_control(text: str) -> Any:
    """One `[uo]:[name]:[r-][w-][a-]` entry (BlobStoreAclHandler.parseAccessControl: one part
    is other's access, two are a user's name and access)."""
    parts = text.split(":")
    while len(parts) > 1 and not parts[-1]:  # Java's split drops trailing empty strings
        parts.pop()
    if len(parts) > 3:
        raise StormArgError(f"don't know how to parse {text!r} into an ACL value")
    kind, name, access = (["o", "", *parts] if len(parts) == 1 else ["u", *parts])[-3:]
    kinds = {"o": T.AccessControlType.OTHER, "other": T.AccessControlType.OTHER}
    kinds |= {"u": T.AccessControlType.USER, "user": T.AccessControlType.USER}
    if kind.lower() not in kinds:
        raise StormArgError(f"{text!r}: {kind!r} is not a valid access control type (u or o)")
    bits = {"r": READ, "w": WRITE, "a": ADMIN, "-": 0}
    if any(c not in bits for c in access):
        raise StormArgError(f"{text!r}: access {access!r} is not made of r, w, a and -")
    mask = 0
    for c in access:
        mask |= bits[c]
    return T.AccessControl(type=kinds[kind.lower()], name=name, access=mask)


def acl(text: str | None) -> list[Any]:
    """A comma separated ACL (`-a`, `--set`); none is an empty list."""
    return [access_control(part) for part in text.split(",")] if text else []


def acl_text(entries: Sequence[Any] | None) -> str:
    """An ACL as Storm's Blobstore prints it: [u:alice:rwa, o::r-]."""
    out = []
    for e in entries or ():
        kind = "o" if e.type == T.AccessControlType.OTHER else "u"
        access = "".join(
            c if e.access & bit else "-" for c, bit in zip("rwa", (READ, WRITE, ADMIN), strict=True)
        )
        out.append(f"{kind}:{e.name or ''}:{access}")
    return "[" + ", ".join(out) + "]"


def properties(text: str) -> dict[str, str]:
    """A Java .properties file (upload-credentials -f): `key=value`, `key: value` or
    `key value` lines, # and ! comments, a trailing backslash continues a line."""
    out: dict[str, str] = {}
    logical = ""
    for raw in text.splitlines():
        line = raw.lstrip()
        if not logical and (not line or line[0] in "#!"):
            continue
        if _continues(line):
            logical += line[:-1]
            continue
        logical += line
        key, value = _key_value(logical)
        out[key] = value
        logical = ""
    if logical:
        key, value = _key_value(logical)
        out[key] = value
    return out


def _continues(line: str) -> bool:
    trailing = len(line) - len(line.rstrip("\\"))
    return trailing % 2 == 1


def _key_value(line: str) -> tuple[str, str]:
    match = re.match(r"((?:\\.|[^=:\s\\])*)\s*[=:]?\s*(.*)", line, re.DOTALL)
    assert match is not None  # the pattern matches any string
    return _unescape(match.group(1)), _unescape(match.group(2))


def _unescape(text: str) -> str:
    escapes = {"t": "\t", "n": "\n", "r": "\r", "f": "\f"}
    return re.sub(r"\\(.)", lambda m: escapes.get(m.group(1), m.group(1)), text)


def credential_pairs(items: Sequence[str]) -> dict[str, str]:
    """`KEY VALUE ...` after the topology name (an even number, as Storm asks)."""
    if len(items) % 2:
        raise StormArgError("please provide a list of credential key and value pairs")
    return {items[i]: items[i + 1] for i in range(0, len(items), 2)}


def component_count(info: Any, component: str, watch: str, stream: str) -> tuple[int, int | None]:
    """Monitor's reading of one TopologyInfo: the component's executors and the all-time
    `watch` ("emitted" or "transferred") count of `stream` summed over them (None: the
    stream is found in none of them)."""
    parallelism, total = 0, None
    for e in info.executors or ():
        if e.component_id != component:
            continue
        parallelism += 1
        counts: Mapping[str, Mapping[str, int]] = (
            getattr(e.stats, watch, None) or {} if e.stats else {}
        )
        value = (counts.get(":all-time") or {}).get(stream)
        if value is not None:
            total = (total or 0) + value
    return parallelism, total


def throughput(delta_count: int, delta_ms: int) -> float:
    """Monitor's throughput column: tuples per millisecond, i.e. thousands per second."""
    return 0.0 if delta_count == 0 or delta_ms == 0 else delta_count / delta_ms
