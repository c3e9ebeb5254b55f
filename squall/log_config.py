"""A topology's dynamic log levels (Storm's setLogConfig): the record nimbus keeps in
/logconfigs/<topology-id>, how nimbus merges a request into it, and which level each logger
has at a given moment in a worker. Pure: time is passed in (wall-clock milliseconds, as
Storm's reset_log_level_timeout_epoch is), so every rule here is unit-tested without clocks.

Levels are Storm's (log4j's) names; a worker maps them onto Python's logging levels and the
logger "ROOT" onto Python's root logger.
"""

from __future__ import annotations

import json
import logging
from collections.abc import Mapping
from dataclasses import dataclass

ROOT = "ROOT"
# log4j's levels as Python numbers: TRACE below DEBUG, FATAL at CRITICAL, OFF above all
LEVELS = {
    "ALL": 1,
    "TRACE": 5,
    "DEBUG": logging.DEBUG,
    "INFO": logging.INFO,
    "WARN": logging.WARNING,
    "ERROR": logging.ERROR,
    "FATAL": logging.CRITICAL,
    "OFF": logging.CRITICAL + 10,
}
# Storm's LogLevelAction values
UNCHANGED, UPDATE, REMOVE = 1, 2, 3
# A hostile or careless client must not grow the ZooKeeper node without bound.
MAX_LOGGERS = 256
MAX_NAME_CHARS = 256


class LogConfigError(ValueError):
    """A setLogConfig request nimbus refuses (the whole request: nothing is merged)."""


@dataclass(frozen=True)
class LoggerLevel:
    """One logger's target level until `reset_epoch_ms` (0: for good), then `reset_level`
    ("" : the level the logger had before the worker changed it)."""

    target: str
    timeout_secs: int = 0
    reset_epoch_ms: int = 0
    reset_level: str = ""


@dataclass(frozen=True)
class Change:
    """One logger of a request: Storm's LogLevel, validated."""

    action: int
    level: LoggerLevel | None = None  # for UPDATE


LogConfig = Mapping[str, LoggerLevel]


def check_level(name: str | None, what: str) -> str:
    level = (name or "").upper()
    if level not in LEVELS:
        raise LogConfigError(f"{what}: {name!r} is not a log level ({', '.join(LEVELS)})")
    return level


def change(
    logger: str,
    action: int | None,
    target: str | None,
    timeout_secs: int | None,
    reset_level: str | None,
) -> Change:
    """A request's entry for `logger`, checked (LogConfigError names what is wrong)."""
    if not logger or len(logger) > MAX_NAME_CHARS:
        raise LogConfigError(f"logger names have 1 to {MAX_NAME_CHARS} characters: {logger!r:.60}")
    if action in (UNCHANGED, REMOVE):
        return Change(action)
    if action != UPDATE:
        raise LogConfigError(f"logger {logger!r}: unknown action {action!r}")
    timeout = timeout_secs or 0
    if timeout < 0:
        raise LogConfigError(f"logger {logger!r}: a negative timeout ({timeout})")
    reset = check_level(reset_level, f"logger {logger!r} reset level") if reset_level else ""
    level = LoggerLevel(check_level(target, f"logger {logger!r}"), timeout, 0, reset)
    return Change(UPDATE, level)


def merge(
    current: LogConfig, changes: Mapping[str, Change], wall_ms: int
) -> dict[str, LoggerLevel]:
    """Storm's Nimbus.setLogConfig: UPDATE replaces a logger's entry (its timeout counted
    from `wall_ms`), REMOVE drops it, UNCHANGED leaves it."""
    merged = dict(current)
    for logger, c in sorted(changes.items()):
        if c.action == REMOVE:
            merged.pop(logger, None)
        elif c.action == UPDATE and c.level is not None:
            timeout = c.level.timeout_secs
            due = wall_ms + timeout * 1000 if timeout > 0 else 0
            merged[logger] = LoggerLevel(c.level.target, timeout, due, c.level.reset_level)
    if len(merged) > MAX_LOGGERS:
        raise LogConfigError(f"at most {MAX_LOGGERS} loggers may have a set level")
    return merged


def levels_at(config: LogConfig, now_ms: int, original: Mapping[str, int]) -> dict[str, int]:
    """The Python level each logger should have at `now_ms`: its target until its reset
    time, then its reset level (or `original`, the level it had before any change). Loggers
    in `original` but no longer in `config` (removed) go back to their original level."""
    out = {name: level for name, level in original.items() if name not in config}
    for name, entry in config.items():
        expired = entry.reset_epoch_ms and now_ms >= entry.reset_epoch_ms
        if not expired:
            out[name] = LEVELS[entry.target]
        elif entry.reset_level:
            out[name] = LEVELS[entry.reset_level]
        else:
            out[name] = original.get(name, logging.NOTSET)
    return out


def next_reset_ms(config: LogConfig, now_ms: int) -> int | None:
    """When the next logger falls back to its reset level (None: none will)."""
    due = [e.reset_epoch_ms for e in config.values() if e.reset_epoch_ms > now_ms]
    return min(due) if due else None


def python_logger(name: str) -> str:
    """Storm's "ROOT" is Python's root logger (""); other names are used as they are."""
    return "" if name == ROOT else name


def encode(config: LogConfig) -> bytes:
    raw = {name: vars(entry) for name, entry in sorted(config.items())}
    return json.dumps(raw, separators=(",", ":"), sort_keys=True).encode()


def decode(data: bytes | None, where: str) -> dict[str, LoggerLevel]:
    """The stored record; anything malformed raises LogConfigError naming the node (anyone
    who can write ZooKeeper can write it; a worker must skip it, not fail)."""
    if not data:
        return {}
    try:
        raw = json.loads(data.decode())
        if not isinstance(raw, dict):
            raise TypeError("not a JSON object")
        out = {}
        for name, entry in raw.items():
            level = LoggerLevel(**entry)
            for number in (level.timeout_secs, level.reset_epoch_ms):
                if not isinstance(number, int) or isinstance(number, bool) or number < 0:
                    raise TypeError(f"{name}: {number!r} is not a whole number >= 0")
            check_level(level.target, name)
            if level.reset_level:
                check_level(level.reset_level, name)
            out[str(name)] = level
        return out
    except (UnicodeDecodeError, ValueError, TypeError, RecursionError) as exc:
        raise LogConfigError(f"{where}: unreadable log config: {exc}") from exc
