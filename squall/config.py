"""Configuration: Storm's key names, defaults from conf/defaults.yaml, typed validation.

Every layer (cluster file, topology conf, CLI flags) goes through `validate`, so a typo in a
key or a string where a number belongs is caught where it is written, not where it is used.
"""

from __future__ import annotations

import functools
import os
from collections.abc import Mapping
from importlib import resources
from pathlib import Path
from typing import Any

import yaml

# Namespaces squall owns: keys there must be known. `spark.` is open (any Spark setting passes
# through to the SparkSession); keys outside these are the user's own and pass through.
OWNED_PREFIXES = (
    "storm.",
    "nimbus.",
    "supervisor.",
    "worker.",
    "task.",
    "topology.",
    "security.",
)
OPEN_PREFIXES = ("spark.",)
# Keys that belong to the cluster, never to one topology: a topology that sets one (e.g.
# storm.zookeeper.root) would point its workers at another cluster, or at nothing.
CLUSTER_ONLY_PREFIXES = ("storm.", "nimbus.", "supervisor.", "security")

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
    "nimbus.blob.max.open.downloads": 1,
    "nimbus.max.tasks": 1,
    "storm.group.mapping.service.cache.duration.secs": 0,
    "supervisor.worker.timeout.secs": 1,
    "supervisor.worker.start.timeout.secs": 1,
    "supervisor.heartbeat.frequency.secs": 1,
    "supervisor.monitor.frequency.secs": 1,
    "supervisor.assignments.full.read.secs": 1,
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
    """A configuration key is unknown or holds a value of the wrong type."""


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


def validate(overrides: Mapping[str, Any], defaults: Conf, source: str) -> Conf:
    """Check `overrides` against the defaults' keys and types; return them as a plain dict."""
    if not isinstance(overrides, Mapping):
        raise ConfigError(f"{source}: expected a mapping of settings, got {_type_name(overrides)}")
    checked: Conf = {}
    for key, value in overrides.items():
        if not isinstance(key, str):
            raise ConfigError(f"{source}: setting names must be strings, got {key!r}")
        if key in defaults:
            if value is not None and not _matches(defaults[key], value):
                wanted = _type_name(defaults[key])
                article = "an" if wanted[0] in "aeiou" else "a"
                got = repr(value) if len(repr(value)) <= 80 else repr(value)[:77] + "..."
                raise ConfigError(
                    f"{source}: {key} must be {article} {wanted}, got {_type_name(value)} {got}"
                )
            if key in MINIMUM and _below(value, MINIMUM[key]):
                raise ConfigError(f"{source}: {key} must be at least {MINIMUM[key]}, got {value}")
            if key in CHOICES and value not in CHOICES[key]:
                raise ConfigError(f"{source}: {key} must be one of {', '.join(CHOICES[key])}")
        elif key.startswith(OWNED_PREFIXES):
            raise ConfigError(f"{source}: unknown setting {key}")
        elif key.startswith(OPEN_PREFIXES) and not isinstance(value, (str, int, float, bool)):
            raise ConfigError(f"{source}: {key} must be a string, number or boolean")
        checked[key] = value
    return checked


def check_topology_keys(conf: Mapping[str, Any], source: str) -> None:
    """A topology conf holds no cluster-only key (validate already checked the rest)."""
    for key in conf:
        if isinstance(key, str) and key.startswith(CLUSTER_ONLY_PREFIXES):
            raise ConfigError(f"{source}: {key} is a cluster setting; a topology cannot set it")


def load_file(path: str | os.PathLike) -> Conf:
    try:
        data = yaml.safe_load(Path(path).read_text()) or {}
    except OSError as exc:
        raise ConfigError(f"cannot read config file {path}: {exc.strerror}") from exc
    except yaml.YAMLError as exc:
        raise ConfigError(f"{path}: not valid YAML: {exc}") from exc
    return data


def cluster_conf(path: str | os.PathLike | None = None, **overrides: Any) -> Conf:
    """Defaults, then the user file (`path` or $SQUALL_CONF), then explicit overrides."""
    defaults = load_defaults()
    conf = dict(defaults)
    path = path or os.environ.get("SQUALL_CONF")
    if path:
        conf.update(validate(load_file(path), defaults, str(path)))
    conf.update(validate(overrides, defaults, "overrides"))
    return conf


def zk_hosts(conf: Conf) -> str:
    port = conf["storm.zookeeper.port"]
    return ",".join(f"{host}:{port}" for host in conf["storm.zookeeper.servers"])
