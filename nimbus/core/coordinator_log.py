"""The coordinator log's messages and their one replay (pure: no database here; store.py
reads and writes the log).

A nimbus that takes the lead rebuilds each live topology's conf from the log (`live`), and
the UI lists every topology ever submitted with the conf it was submitted with
(`submitted`): both come from one pass, `replay`, with one set of rules for what counts.
A message from an epoch older than one already seen was written by a deposed leader after
it lost the lead and is ignored; a message whose fields have the wrong types (a
hand-edited or foreign row) is skipped, never raised on.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any


@dataclass(frozen=True)
class CoordinatorMessage:
    seq: int
    version: str
    type: str
    key: str
    host: str
    username: str
    source: str
    timestamp: float
    values: dict[str, Any]


@dataclass(frozen=True)
class Replayed:
    """`live`: each live topology's conf as submitted, with every set-config and rebalance
    conf override since applied in order. `submitted`: every topology ever submitted (the
    log keeps its submit after the topology is gone), with the conf it was submitted with."""

    live: dict[str, dict[str, Any]]
    submitted: dict[str, dict[str, Any]]


def replay(messages: Iterable[CoordinatorMessage]) -> Replayed:
    live: dict[str, dict[str, Any]] = {}
    submitted: dict[str, dict[str, Any]] = {}
    newest = 0
    for m in messages:
        epoch = m.values.get("epoch", 0)
        if not isinstance(epoch, int) or epoch < newest:
            continue
        newest = epoch
        tid = m.values.get("topology")
        if not isinstance(tid, str):
            continue
        if m.type == "submit":
            conf = m.values.get("conf", {})
            if isinstance(conf, dict):
                submitted[tid] = conf
                live[tid] = dict(conf)
        elif m.type == "set-config" and tid in live and "value" in m.values:
            live[tid][m.key] = m.values["value"]
        elif m.type == "rebalance-conf" and tid in live and isinstance(m.values.get("conf"), dict):
            live[tid].update(m.values["conf"])  # a rebalance's topology_conf_overrides
        elif m.type == "kill" and m.values.get("removed"):
            live.pop(tid, None)
    return Replayed(live, submitted)


def topology_confs(messages: Iterable[CoordinatorMessage]) -> dict[str, dict[str, Any]]:
    """Each live topology's conf now (`Replayed.live`)."""
    return replay(messages).live


def submitted_confs(messages: Iterable[CoordinatorMessage]) -> dict[str, dict[str, Any]]:
    """Every topology ever submitted, with its conf as submitted (`Replayed.submitted`)."""
    return replay(messages).submitted
