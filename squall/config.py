"""Configuration: Storm's key names, defaults from conf/defaults.yaml, typed validation.

Every layer (cluster file, topology conf, CLI flags) goes through `review`, so a string where
a number belongs is caught where it is written, not where it is used. Storm's rule for keys:
any key is accepted (a user's own keys pass through to components), and the keys Storm knows
are type-checked. squall adds: the keys it implements (conf/defaults.yaml) are checked with
its own types and bounds; Storm's keys it does not implement (squall/storm_keys.py) are
checked as Storm would, then ignored and named once in the log; a key one edit away from a
known one gets a "did you mean"; and a topology's cluster settings are dropped.
"""

from __future__ import annotations

import functools
import logging
import os
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from importlib import resources
from pathlib import Path
from typing import Any

import yaml

from squall import storm_checks
from squall.storm_keys import KEYS as STORM_KEYS

log = logging.getLogger("squall.config")

# `spark.` keys pass through to the SparkSession: plain values only.
OPEN_PREFIXES = ("spark.",)
# Keys that belong to the cluster, never to one topology: a topology that sets one (e.g.
# storm.zookeeper.root) would point its workers at another cluster, or at nothing. Storm lets
# a topology carry them; squall drops them from the topology's conf (and says so).
CLUSTER_ONLY_PREFIXES = ("storm.", "nimbus.", "supervisor.", "security")
IGNORED_REASON = "Storm key squall does not implement"

# Sizes, counts and periods where 0 or less means a busy loop, a division by zero or nothing
# at all (topology.batch.size 0 spun a worker at 94% CPU): the smallest value each may take.
MINIMUM = {
    "storm.zookeeper.session.timeout": 1,
    "storm.zookeeper.connection.timeout": 1,
    "nimbus.thrift.max_buffer_size": 1,
    "nimbus.thrift.max.connections": 1,
    "nimbus.thrift.client.idle.secs": 1,
    "nimbus.thrift.max.request.values": 1,
    "nimbus.thrift.max.connections.per.address": 1,
    "nimbus.thrift.request.timeout.secs": 1,
    "nimbus.thrift.handshake.timeout.secs": 1,
    "nimbus.thrift.threads": 1,
    "nimbus.monitor.freq.secs": 1,
    "nimbus.task.timeout.secs": 1,
    "nimbus.task.launch.secs": 1,
    "nimbus.supervisor.timeout.secs": 1,
    "nimbus.upload.max.bytes": 1,
    "nimbus.upload.max.open": 1,
    "nimbus.upload.max.open.bytes": 1,
    "nimbus.upload.max.open.total": 1,
    "nimbus.blob.max.bytes": 1,
    "nimbus.blob.max.count": 1,
    "nimbus.blob.max.count.per.user": 1,
    "nimbus.blob.max.bytes.per.user": 1,
    "nimbus.topologies.max.per.user": 1,
    "nimbus.slots.max.per.user": 1,
    "blacklist.scheduler.tolerance.time.secs": 1,
    "blacklist.scheduler.tolerance.count": 1,
    "blacklist.scheduler.resume.time.secs": 1,
    "nimbus.blob.max.open.downloads": 1,
    "nimbus.max.tasks": 1,
    "storm.group.mapping.service.cache.duration.secs": 0,
    "supervisor.worker.timeout.secs": 1,
    "supervisor.worker.start.timeout.secs": 1,
    "supervisor.heartbeat.frequency.secs": 1,
    "supervisor.monitor.frequency.secs": 1,
    "supervisor.assignments.full.read.secs": 1,
    "supervisor.health.check.interval.secs": 1,
    "storm.health.check.timeout.ms": 1,
    "supervisor.code.max.bytes": 1,
    "supervisor.code.max.entries": 1,
    "supervisor.worker.max.memory.mb": 64,
    "supervisor.spark.connect.port": 0,
    "supervisor.spark.connect.start.timeout.secs": 1,
    "worker.log.max.bytes": 4096,
    "worker.log.backups": 0,
    "topology.worker.max.memory.mb": 64,
    "worker.heartbeat.frequency.secs": 1,
    "topology.subprocess.timeout.secs": 1,
    "worker.max.message.bytes": 1,  # 0 would refuse every frame; ZeroMQ reads -1 as no limit
    "task.heartbeat.frequency.secs": 1,
    "topology.workers": 1,
    "topology.message.timeout.secs": 1,
    "topology.acker.executors": 0,
    "topology.max.spout.pending": 0,  # 0: no limit, as Storm's null
    "topology.batch.size": 1,
    "topology.batch.timeout.ms": 1,
    "topology.batch.flush.interval.millis": 1,
    "topology.producer.batch.size": 1,
    "topology.executor.receive.buffer.size": 1,
    "topology.transfer.buffer.size": 1,
    "topology.worker.gil.switch.micros": 1,
    "topology.worker.gc.young.threshold": 1,
    "topology.backpressure.check.millis": 1,
    "topology.localityaware.higher.bound": 0,
    "topology.localityaware.lower.bound": 0,
    "topology.max.error.report.per.interval": 1,
    "topology.error.throttle.interval.secs": 1,
    "topology.executor.stall.secs": 1,
    "ui.port": 1,
    "supervisor.memory.capacity.mb": 0,
    "supervisor.cpu.capacity": 0,
    "topology.component.resources.onheap.memory.mb": 0,
    "topology.component.cpu.pcore.percent": 0,
    "topology.worker.max.heap.size.mb": 1,
    "topology.priority": 0,
}

Conf = dict[str, Any]
CHOICES = {"topology.spark.handoff": ("auto", "arrow", "parquet")}


class ConfigError(ValueError):
    """A configuration value of the wrong type for its key (or a conf that is no mapping)."""


@functools.cache
def _defaults() -> Conf:
    return yaml.safe_load(resources.files("squall").joinpath("defaults.yaml").read_text())


def load_defaults() -> Conf:
    """The defaults, parsed once per process (validation runs per component); a copy, so
    no caller can change them for the others."""
    return dict(_defaults())


def _type_name(value: Any) -> str:
    return {bool: "boolean", int: "integer", float: "number", str: "string", list: "list"}.get(
        type(value), type(value).__name__
    )


def _matches(default: Any, value: Any) -> bool:
    if default is None:  # "unset" defaults take a number, a string or a flag
        return isinstance(value, (int, float, str, bool))
    if isinstance(default, bool):
        return isinstance(value, bool)
    if isinstance(default, int):
        return isinstance(value, int) and not isinstance(value, bool)
    if isinstance(default, float):
        return isinstance(value, (int, float)) and not isinstance(value, bool)
    return isinstance(value, type(default))


def _below(value: Any, minimum: int) -> bool:
    return isinstance(value, (int, float)) and not isinstance(value, bool) and value < minimum


@dataclass(frozen=True)
class Review:
    """A conf that passed validation, and what to tell its author: the Storm keys accepted
    and ignored, the keys that look like typos of known ones, and the cluster settings left
    out of a topology's conf."""

    source: str
    conf: Conf
    ignored: tuple[str, ...] = ()
    suggestions: tuple[tuple[str, str], ...] = ()  # (key as written, known key one edit away)
    dropped: tuple[str, ...] = ()

    def messages(self) -> list[tuple[int, str]]:
        """(logging level, line) for each thing worth saying, most urgent first."""
        said = [
            (logging.WARNING, f"{self.source}: unknown setting {key}: did you mean {known}?")
            for key, known in self.suggestions
        ]
        if self.dropped:
            said.append(
                (
                    logging.WARNING,
                    f"{self.source}: left out: {', '.join(self.dropped)} (cluster settings, "
                    "which a topology cannot set: the cluster's own values apply)",
                )
            )
        if self.ignored:
            said.append(
                (
                    logging.INFO,
                    f"{self.source}: accepted and ignored ({IGNORED_REASON}): "
                    + ", ".join(self.ignored),
                )
            )
        return said


def _shown(value: Any) -> str:
    """A value's type and repr, cut to fit an error line."""
    text = repr(value) if len(repr(value)) <= 80 else repr(value)[:77] + "..."
    return f"{_type_name(value)} {text}"


def _type_problem(key: str, value: Any, defaults: Conf) -> str | None:
    """Why `value` cannot be `key`'s, or None: squall's type and bounds for the keys it
    implements (and Storm's checks where squall's default does not say the type), Storm's
    validators for Storm's other keys."""
    storm = STORM_KEYS.get(key, ("", ()))[1]
    if key in defaults:
        # squall's null says nothing of a Storm key's type: Storm's validators below do
        typed = defaults[key] is not None or key not in STORM_KEYS
        if value is not None and typed and not _matches(defaults[key], value):
            wanted = _type_name(defaults[key])
            article = "an" if wanted[0] in "aeiou" else "a"
            return f"{key} must be {article} {wanted}, got {_shown(value)}"
        if key in MINIMUM and _below(value, MINIMUM[key]):
            return f"{key} must be at least {MINIMUM[key]}, got {value}"
        if key in CHOICES and value not in CHOICES[key]:
            return f"{key} must be one of {', '.join(CHOICES[key])}"
        if defaults[key] is None:  # squall's null says nothing of the type: Storm's does
            storm = tuple(c for c in storm if c != "not-null")
        else:
            return None
    found = storm_checks.problem(storm, value)
    if found:
        return f"{key} {found}, got {_shown(value)}"
    if key.startswith(OPEN_PREFIXES) and not isinstance(value, (str, int, float, bool)):
        return f"{key} must be a string, number or boolean"
    return None


def one_edit(a: str, b: str) -> bool:
    """Whether `b` is `a` with one character inserted, deleted, replaced, or two adjacent
    characters swapped (Damerau-Levenshtein distance 1)."""
    if a == b or abs(len(a) - len(b)) > 1:
        return False
    i = 0
    while i < min(len(a), len(b)) and a[i] == b[i]:
        i += 1
    if len(a) > len(b):
        return a[i + 1 :] == b[i:]
    if len(a) < len(b):
        return a[i:] == b[i + 1 :]
    swapped = i + 1 < len(a) and a[i] == b[i + 1] and a[i + 1] == b[i]
    return a[i + 1 :] == b[i + 1 :] or (swapped and a[i + 2 :] == b[i + 2 :])


def did_you_mean(key: str, known: Iterable[str]) -> str | None:
    """The known key `key` is one edit away from (the first in sorted order), or None."""
    return next((k for k in sorted(known) if one_edit(key, k)), None)


def is_cluster_key(key: str) -> bool:
    """Whether `key` belongs to the cluster and never to one topology."""
    return key.startswith(CLUSTER_ONLY_PREFIXES)


def review(
    overrides: Mapping[str, Any], defaults: Conf, source: str, topology: bool = False
) -> Review:
    """Check `overrides` (a cluster file's, or with `topology` a topology's or component's
    conf) and say what was accepted how. A wrong type for a key squall or Storm knows is a
    ConfigError; an unknown key is never one (Storm's rule). A topology's cluster settings
    are type-checked, then left out of its conf."""
    if not isinstance(overrides, Mapping):
        raise ConfigError(f"{source}: expected a mapping of settings, got {_type_name(overrides)}")
    checked: Conf = {}
    ignored: list[str] = []
    suggestions: list[tuple[str, str]] = []
    dropped: list[str] = []
    for key, value in overrides.items():
        if not isinstance(key, str):
            raise ConfigError(f"{source}: setting names must be strings, got {key!r}")
        found = _type_problem(key, value, defaults)
        if found:
            raise ConfigError(f"{source}: {found}")
        if topology and is_cluster_key(key):
            dropped.append(key)
            continue
        if key not in defaults and key in STORM_KEYS:
            ignored.append(key)
        elif key not in defaults and not key.startswith(OPEN_PREFIXES):
            known = did_you_mean(key, [*defaults, *STORM_KEYS])
            if known:
                suggestions.append((key, known))
        checked[key] = value
    return Review(source, checked, tuple(ignored), tuple(suggestions), tuple(dropped))


def validate(overrides: Mapping[str, Any], defaults: Conf, source: str) -> Conf:
    """Check `overrides` against the keys squall and Storm know; return them as a plain
    dict (what `review` says about them is left unsaid)."""
    return review(overrides, defaults, source).conf


_said: set[str] = set()


def log_review(
    found: Review, logger: logging.Logger = log, ignored: bool = True, once: bool = True
) -> None:
    """Log what `found` has to say. `once`: each line once per process (the CLI and daemons
    load the same file more than once); a submit says it every time. `ignored` False: only
    the warnings."""
    for level, line in found.messages():
        if (not ignored and level < logging.WARNING) or (once and line in _said):
            continue
        if once:  # only lines said once are kept: a nimbus's submits would grow it for ever
            _said.add(line)
        logger.log(level, line)


def load_file(path: str | os.PathLike) -> Conf:
    try:
        data = yaml.safe_load(Path(path).read_text()) or {}
    except OSError as exc:
        raise ConfigError(f"cannot read config file {path}: {exc.strerror}") from exc
    except yaml.YAMLError as exc:
        raise ConfigError(f"{path}: not valid YAML: {exc}") from exc
    return data


def _user_file(path: str | os.PathLike | None) -> str | os.PathLike | None:
    return path or os.environ.get("SQUALL_CONF")


def cluster_conf(path: str | os.PathLike | None = None, **overrides: Any) -> Conf:
    """Defaults, then the user file (`path` or $SQUALL_CONF), then explicit overrides.
    Typos ("did you mean") are logged; the Storm keys it ignores are said by `report_file`
    where a daemon starts, not on every command."""
    defaults = load_defaults()
    conf = dict(defaults)
    path = _user_file(path)
    if path:
        found = review(load_file(path), defaults, str(path))
        log_review(found, ignored=False)
        conf.update(found.conf)
    conf.update(validate(overrides, defaults, "overrides"))
    return conf


def report_file(path: str | os.PathLike | None = None, logger: logging.Logger = log) -> None:
    """Log, once, what the user file (`path` or $SQUALL_CONF) holds that squall accepts
    without using: for a daemon's start, where an operator reads it."""
    path = _user_file(path)
    if path:
        log_review(review(load_file(path), load_defaults(), str(path)), logger)


def zk_hosts(conf: Conf) -> str:
    port = conf["storm.zookeeper.port"]
    return ",".join(f"{host}:{port}" for host in conf["storm.zookeeper.servers"])
