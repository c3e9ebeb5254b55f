"""`squall heartbeats list|get PATH`: Storm's Heartbeats command, read straight from
ZooKeeper as the nimbus role (it needs the nimbus host's ZooKeeper identity when security is
on, as Storm's needs the daemons' credentials).

PATH is under storm.zookeeper.root, as in Storm. squall keeps a worker's heartbeat at
/taskbeats/[topology-id]/[node]-[port] (squall.zk.layout); Storm's /workerbeats is read as
/taskbeats, so `squall heartbeats list /workerbeats` works as a Storm user types it."""

from __future__ import annotations

import json
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

import click
from kazoo.exceptions import KazooException, NoNodeError

from squall.commands.group import main
from squall.commands.storm_args import StormArgError
from squall.records import RecordError, WorkerBeat, decode

STORM_ROOT, SQUALL_ROOT = "workerbeats", "taskbeats"


def zk_path(root: str, path: str) -> str:
    """PATH (under storm.zookeeper.root) as the absolute node path, Storm's names mapped."""
    parts = [p for p in path.split("/") if p]
    if parts and parts[0] == STORM_ROOT:
        parts[0] = SQUALL_ROOT
    return "/" + "/".join([p for p in root.split("/") if p] + parts)


def storm_shaped(topology_id: str | None, beat: WorkerBeat) -> dict[str, Any]:
    """A worker heartbeat with the keys of Storm's StatsUtil.convertZkWorkerHb (stats per
    task, squall's executors being one task each), plus squall's `seq`."""
    return {
        "storm-id": topology_id,
        "executor-stats": {str(task): stats for task, stats in sorted(beat.tasks.items())},
        "uptime": beat.uptime_secs,
        "time-secs": beat.time_secs,
        "seq": beat.seq,
    }


@contextmanager
def _zookeeper(conf: dict[str, Any]) -> Iterator[Any]:
    from squall.zk.connection import connect

    client = connect(conf, "nimbus")  # ZooKeeperUnreachable: one line, from the group
    try:
        yield client
    finally:
        client.stop()
        client.close()


@main.group()
def heartbeats() -> None:
    """Workers' heartbeats as stored in ZooKeeper (Storm's heartbeats command)."""


@heartbeats.command("list")
@click.argument("path")
@click.pass_context
def list_heartbeats(ctx: click.Context, path: str) -> None:
    """List the heartbeat nodes under PATH, e.g. /workerbeats or /workerbeats/TOPOLOGY-ID."""
    conf = ctx.obj
    with _zookeeper(conf) as zk:
        try:
            children = sorted(zk.get_children(zk_path(conf["storm.zookeeper.root"], path)))
        except NoNodeError:
            children = []
        except KazooException as exc:
            raise StormArgError(f"cannot list {path}: {type(exc).__name__}") from None
    click.echo(f"list {path}:")
    for child in children:
        click.echo(child)


@heartbeats.command("get")
@click.argument("path")
@click.pass_context
def get_heartbeat(ctx: click.Context, path: str) -> None:
    """Print the heartbeat at PATH (/workerbeats/TOPOLOGY-ID/NODE-PORT) as JSON."""
    conf = ctx.obj
    node = zk_path(conf["storm.zookeeper.root"], path)
    with _zookeeper(conf) as zk:
        try:
            data, _ = zk.get(node)
        except NoNodeError:
            data = None
        except KazooException as exc:
            raise StormArgError(f"cannot read {path}: {type(exc).__name__}") from None
    if not data:
        click.echo("No Heartbeats found")
        return
    try:
        beat = decode(WorkerBeat, data, node)
    except RecordError as exc:
        raise StormArgError(str(exc)) from None
    parts = [p for p in path.split("/") if p]
    topology_id = parts[1] if len(parts) >= 3 else None
    click.echo(json.dumps(storm_shaped(topology_id, beat), separators=(",", ":")))
