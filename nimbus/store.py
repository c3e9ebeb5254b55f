"""Nimbus's durable state in any SQLAlchemy database (a SQLite file by default; a PostgreSQL
URL when several nimbus hosts must share it).

- `topologies`: each topology's name, conf, validated structure and code package, so any
  nimbus, including a standby that just took over, can serve code to supervisors.
- `coordinator_log`: seed 004's coordinator stream. Append-only and ordered; each message
  has the key [version, type, key] and the value {host, username, source, timestamp,
  values}, both compact JSON. Types: set-config, set-changelog,
  set-container-host-assignment, and squall's submit, kill, rebalance, assignment. A nimbus
  that takes the lead replays it to rebuild its model.
"""

from __future__ import annotations

import getpass
import json
import socket
import time
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

from sqlalchemy import (
    Column,
    Float,
    Integer,
    LargeBinary,
    MetaData,
    String,
    Table,
    Text,
    create_engine,
    delete,
    insert,
    select,
)
from sqlalchemy.exc import DBAPIError

from squall.nimbus.core.coordinator_log import CoordinatorMessage

__all__ = ["Store", "compact"]

LOG_FORMAT_VERSION = "1"  # the coordinator log's key format, not squall's version
MESSAGE_TYPES = {
    "set-config",
    "set-changelog",
    "set-container-host-assignment",
    "submit",
    "kill",
    "rebalance",
    "rebalance-conf",  # a rebalance's topology conf overrides (replayed into the conf)
    "rebalance-resources",  # a rebalance's component resource overrides (kept in /storms)
    "assignment",
    "blacklist",  # a supervisor left out of scheduling or back (nimbus/scheduling/blacklist.py)
}

metadata = MetaData()
topologies = Table(
    "topologies",
    metadata,
    Column("id", String(200), primary_key=True),
    Column("name", String(100), nullable=False),
    Column("conf", Text, nullable=False),
    Column("structure", Text, nullable=False),
    Column("code", LargeBinary, nullable=False),
    Column("created", Float, nullable=False),
)
coordinator_log = Table(
    "coordinator_log",
    metadata,
    Column("seq", Integer, primary_key=True, autoincrement=True),
    Column("key", Text, nullable=False),
    Column("value", Text, nullable=False),
)


def compact(value: Any) -> str:
    """JSON without any whitespace (seed 004: the serialized form must have none)."""
    return json.dumps(value, separators=(",", ":"), sort_keys=True)


def _seq(primary_key: Any) -> int:
    """The seq of a log row just inserted. SQLAlchemy types the key as optional; a one-row
    INSERT, all append_all runs, always has one."""
    if primary_key is None:
        raise RuntimeError("the database gave no seq for a coordinator log message")
    return int(primary_key[0])


@dataclass(frozen=True)
class StoredTopology:
    id: str
    name: str
    conf: dict[str, Any]
    structure: dict[str, Any]


class Store:
    def __init__(self, url: str, source: str) -> None:
        sqlite = url.startswith("sqlite")
        # SQLite: several nimbus processes share the file; wait for its lock, don't fail.
        self.engine = create_engine(url, connect_args={"timeout": 30} if sqlite else {})
        self._create_tables()
        self.source = source
        self.host = socket.gethostname()
        try:
            self.username = getpass.getuser()
        except (KeyError, OSError):
            self.username = "unknown"

    def _create_tables(self, attempts: int = 5) -> None:
        """Create what is missing. Nimbuses started together race here: SQLAlchemy creates
        one table at a time, so each table can be the one another process created between
        our check and our CREATE; every try gets further, and the last error is real."""
        for attempt in range(attempts):
            try:
                metadata.create_all(self.engine)
                return
            except DBAPIError:
                if attempt == attempts - 1:
                    raise
                time.sleep(0.05 * (attempt + 1))

    # --- topologies ---

    def save_topology(
        self, tid: str, name: str, conf: dict, structure: dict, code: bytes, now: float
    ) -> None:
        with self.engine.begin() as db:
            db.execute(
                insert(topologies).values(
                    id=tid,
                    name=name,
                    conf=compact(conf),
                    structure=compact(structure),
                    code=code,
                    created=now,
                )
            )

    def topology(self, tid: str) -> StoredTopology | None:
        with self.engine.connect() as db:
            row = db.execute(
                select(
                    topologies.c.id, topologies.c.name, topologies.c.conf, topologies.c.structure
                ).where(topologies.c.id == tid)
            ).first()
        if row is None:
            return None
        return StoredTopology(row.id, row.name, json.loads(row.conf), json.loads(row.structure))

    def update_conf(self, tid: str, conf: dict[str, Any]) -> None:
        with self.engine.begin() as db:
            db.execute(topologies.update().where(topologies.c.id == tid).values(conf=compact(conf)))

    def code(self, tid: str) -> bytes | None:
        with self.engine.connect() as db:
            return db.execute(select(topologies.c.code).where(topologies.c.id == tid)).scalar()

    def topology_ids(self) -> set[str]:
        with self.engine.connect() as db:
            return set(db.execute(select(topologies.c.id)).scalars())

    def remove_topology(self, tid: str) -> None:
        with self.engine.begin() as db:
            db.execute(delete(topologies).where(topologies.c.id == tid))

    # --- the coordinator log ---

    def append(self, type_: str, key: str, values: dict[str, Any]) -> int:
        return self.append_all([(type_, key, values)])[0]

    def append_all(self, messages: list[tuple[str, str, dict[str, Any]]]) -> list[int]:
        """Several messages in one database transaction, in order: one commit (one fsync of
        SQLite's file) for a round that moved many topologies, not one each."""
        for type_, _, _ in messages:
            if type_ not in MESSAGE_TYPES:
                raise ValueError(f"unknown coordinator message type {type_!r}")
        seqs = []
        with self.engine.begin() as db:
            for type_, key, values in messages:
                value = {
                    "host": self.host,
                    "username": self.username,
                    "source": self.source,
                    "timestamp": time.time(),
                    "values": values,
                }
                result = db.execute(
                    insert(coordinator_log).values(
                        key=compact([LOG_FORMAT_VERSION, type_, key]), value=compact(value)
                    )
                )
                seqs.append(_seq(result.inserted_primary_key))
        return seqs

    def log(self, since: int = 0) -> Iterator[CoordinatorMessage]:
        with self.engine.connect() as db:
            rows = db.execute(
                select(coordinator_log)
                .where(coordinator_log.c.seq > since)
                .order_by(coordinator_log.c.seq)
            ).all()
        for row in rows:
            version, type_, key = json.loads(row.key)
            value = json.loads(row.value)
            yield CoordinatorMessage(
                row.seq,
                version,
                type_,
                key,
                value["host"],
                value["username"],
                value["source"],
                value["timestamp"],
                value["values"],
            )

    def close(self) -> None:
        self.engine.dispose()
