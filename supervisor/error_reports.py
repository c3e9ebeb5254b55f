"""A topology's errors as its supervisor sees them (code that cannot be fetched or unpacked, a
worker that died or passed its memory limit), written where getTopologyInfo shows the errors
its workers report: /errors/[topology-id]/__supervisor, last MAX_KEPT entries, the
supervisor's host as their source. Without it a submitter saw 'submitted' and nothing else.
"""

from __future__ import annotations

import json
import logging
import time
from typing import Any

from kazoo.exceptions import BadVersionError, KazooException, NodeExistsError, NoNodeError

COMPONENT = "__supervisor"
MAX_KEPT = 10
MAX_TEXT = 4000

log = logging.getLogger("squall.supervisor")


def report_error(
    zk: Any, errors_path: str, text: str, host: str, port: int | None, now: float | None = None
) -> None:
    """Append one entry (compare-and-set, so concurrent writers lose nothing); a ZooKeeper
    failure is logged, never raised into the sync loop."""
    path = f"{errors_path}/{COMPONENT}"
    entry = {
        "error": text[-MAX_TEXT:],
        "time_secs": int(time.time() if now is None else now),
        "host": host,
        "port": port,
    }
    try:
        for _ in range(5):
            try:
                data, stat = zk.get(path)
                entries = (_entries(data) + [entry])[-MAX_KEPT:]
                zk.set(path, json.dumps(entries).encode(), version=stat.version)
                return
            except NoNodeError:
                try:
                    zk.create(path, json.dumps([entry]).encode(), makepath=True)
                    return
                except NodeExistsError:
                    continue
            except BadVersionError:
                continue
    except KazooException as exc:
        log.warning("cannot record an error of %s: %s", errors_path, exc)


def _entries(data: bytes | None) -> list[Any]:
    try:
        entries = json.loads(data or b"[]")
    except (ValueError, UnicodeDecodeError, RecursionError):
        return []
    return [e for e in entries if isinstance(e, dict)] if isinstance(entries, list) else []
