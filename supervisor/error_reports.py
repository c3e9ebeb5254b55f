"""A topology's errors as its supervisor sees them (code that cannot be fetched or unpacked, a
worker that died or passed its memory limit), written where getTopologyInfo shows the errors
its workers report (squall/error_nodes.py): /errors/[topology-id]/__supervisor, the
supervisor's host as their source. Without it a submitter saw 'submitted' and nothing else.
"""

from __future__ import annotations

import logging
from typing import Any

from kazoo.exceptions import KazooException

from squall import error_nodes

COMPONENT = "__supervisor"
MAX_TEXT = 4000

log = logging.getLogger("squall.supervisor")


def report_error(
    zk: Any, errors_path: str, text: str, host: str, port: int | None, now: float | None = None
) -> None:
    """Append one entry (compare-and-set, so concurrent writers lose nothing); a ZooKeeper
    failure is logged, never raised into the sync loop."""
    try:
        error_nodes.append(
            zk, f"{errors_path}/{COMPONENT}", error_nodes.entry(text[-MAX_TEXT:], host, port, now)
        )
    except KazooException as exc:
        log.warning("cannot record an error of %s: %s", errors_path, exc)
