"""An /errors/[topology-id]/[component] node: a JSON list of the latest error entries, which
getTopologyInfo shows. Workers append their tasks' errors and supervisors theirs (component
`__supervisor`) by compare-and-set, so concurrent writers lose nothing; junk found in a node is
replaced, never fatal."""

from __future__ import annotations

import json
import time
from typing import Any

from kazoo.exceptions import BadVersionError, NodeExistsError, NoNodeError

MAX_KEPT = 10  # entries per node: the latest


def entry(text: str, host: str, port: int | None, now: float | None = None) -> dict[str, Any]:
    return {
        "error": text,
        "time_secs": int(time.time() if now is None else now),
        "host": host,
        "port": port,
    }


def append(
    zk: Any, path: str, new: dict[str, Any], tries: int = 5, make_parents: bool = True
) -> bool:
    """Add `new` to the node at `path` (created if missing), keeping the latest MAX_KEPT.
    False when `make_parents` is off and the node's parent is missing: nothing is written
    (a topology removed meanwhile must not get its /errors subtree back as an orphan)."""
    for _ in range(tries):
        try:
            data, stat = zk.get(path)
            entries = (existing(data) + [new])[-MAX_KEPT:]
            zk.set(path, json.dumps(entries).encode(), version=stat.version)
            return True
        except NoNodeError:
            try:
                zk.create(path, json.dumps([new]).encode(), makepath=make_parents)
                return True
            except NodeExistsError:
                continue
            except NoNodeError:
                return False
        except BadVersionError:
            continue
    return True  # lost every race to other writers: theirs are there


def create_while(zk: Any, alive: str, path: str, new: dict[str, Any]) -> bool:
    """Create `path` holding `new`, and its parent, in one transaction that holds only while
    `alive` exists (a topology's /storms node): a report never brings back the /errors
    subtree of a topology removed meanwhile. False when nothing was created (`alive` gone, or
    another writer made the parent first)."""
    transaction = zk.transaction()
    transaction.check(alive, -1)  # -1: any version, so: it exists
    transaction.create(path.rsplit("/", 1)[0], b"")
    transaction.create(path, json.dumps([new]).encode())
    return not any(isinstance(result, Exception) for result in transaction.commit())


def existing(data: bytes | None) -> list[Any]:
    """The entries already in a node; junk there counts as none."""
    try:
        entries = json.loads(data or b"[]")
    except (ValueError, UnicodeDecodeError, RecursionError):
        return []
    return [e for e in entries if isinstance(e, dict)] if isinstance(entries, list) else []
