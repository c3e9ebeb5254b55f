"""Connecting to ZooKeeper with the cluster conf's servers and timeouts."""

from __future__ import annotations

import logging
from typing import Any, TypeVar

from kazoo.client import KazooClient
from kazoo.exceptions import NoNodeError
from kazoo.retry import KazooRetry

from squall.config import zk_hosts
from squall.records import RecordError, decode
from squall.zk_layout import ZkLayout

R = TypeVar("R")
log = logging.getLogger("squall.zk")


def connect(conf: dict[str, Any]) -> KazooClient:
    client = KazooClient(
        hosts=zk_hosts(conf),
        timeout=conf["storm.zookeeper.session.timeout"] / 1000,
        connection_retry=KazooRetry(max_tries=-1, max_delay=5),
        command_retry=KazooRetry(max_tries=5, max_delay=2),
        logger=logging.getLogger("squall.kazoo"),
    )
    client.start(timeout=conf["storm.zookeeper.connection.timeout"] / 1000)
    return client


def layout(conf: dict[str, Any]) -> ZkLayout:
    return ZkLayout(conf["storm.zookeeper.root"])


def children(zk: KazooClient, path: str) -> list[str]:
    try:
        return sorted(zk.get_children(path))
    except NoNodeError:
        return []


def read_record(zk: KazooClient, cls: type[R], path: str) -> R | None:
    try:
        data, _ = zk.get(path)
    except NoNodeError:
        return None
    return decode(cls, data, path)


def read_records(zk: KazooClient, cls: type[R], parent: str) -> dict[str, R]:
    """Every child of `parent` decoded as `cls`; a foreign or corrupt node is skipped."""
    out = {}
    for child in children(zk, parent):
        try:
            record = read_record(zk, cls, f"{parent}/{child}")
        except RecordError as exc:
            log.warning("skipping a node this version cannot read: %s", exc)
            continue
        if record is not None:
            out[child] = record
    return out


def read_epoch(zk: KazooClient, lay: ZkLayout) -> int | None:
    """The current leader epoch (/nimbus/epoch), or None when it is missing or not a
    non-negative integer (then nothing can be checked against it)."""
    try:
        data, _ = zk.get(lay.nimbus_epoch)
    except NoNodeError:
        return None
    text = (data or b"0").decode("ascii", "replace").strip()
    if not text.isdigit() or len(text) > 18:
        log.warning("%s holds %r, not an epoch", lay.nimbus_epoch, text[:40])
        return None
    return int(text)
