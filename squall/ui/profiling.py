"""Storm UI's profiling and debugging actions (POST /topology/:id/profiling/...), as Storm's
UIHelpers asks nimbus for them: a setWorkerProfiler request for one worker ("host:port").
`start` is a JPROFILE_STOP request dated when profiling is to end (Storm's way: the worker
profiles until then), `stop` one dated 0, the others dated now. Pure: time is passed in.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any

from squall import thrift_api as T

from .topology_json import BadRequest

PATHS = {
    "start": "/profiling/start/{host_port}/{timeout}",
    "dumpprofile": "/profiling/dumpprofile/{host_port}",
    "stop": "/profiling/stop/{host_port}",
    "dumpjstack": "/profiling/dumpjstack/{host_port}",
    "restartworker": "/profiling/restartworker/{host_port}",
    "dumpheap": "/profiling/dumpheap/{host_port}",
}
ACTIONS = {
    "start": T.ProfileAction.JPROFILE_STOP,
    "stop": T.ProfileAction.JPROFILE_STOP,
    "dumpprofile": T.ProfileAction.JPROFILE_DUMP,
    "dumpjstack": T.ProfileAction.JSTACK_DUMP,
    "restartworker": T.ProfileAction.JVM_RESTART,
    "dumpheap": T.ProfileAction.JMAP_DUMP,
}
MAX_TIMEOUT_MINUTES = 7 * 24 * 60


@dataclass(frozen=True)
class ProfileAsk:
    request: Any  # T.ProfileRequest
    answer: dict[str, Any]  # Storm's JSON answer


def worker(host_port: str) -> tuple[str, int]:
    """ "host:port" (the last colon splits, so "[::1]:6700" works) -> (host, port)."""
    host, _, port = host_port.rpartition(":")
    if not host or not re.fullmatch(r"[0-9]{1,5}", port) or not 0 < int(port) < 65536:
        raise BadRequest(f"a worker is host:port; got {host_port!r:.80}")
    return host, int(port)


def ask(action: str, host_port: str, timeout: str | None, now: float) -> ProfileAsk:
    host, port = worker(host_port)
    now_ms = int(now * 1000)
    answer: dict[str, Any] = {"status": "ok", "id": host_port}
    stamp = now_ms
    if action == "start":
        if timeout is None or not re.fullmatch(r"[0-9]{1,6}", timeout):
            raise BadRequest(f"timeout is a number of minutes; got {timeout!r:.40}")
        if not 0 < int(timeout) <= MAX_TIMEOUT_MINUTES:
            raise BadRequest(f"timeout must be 1 to {MAX_TIMEOUT_MINUTES} minutes")
        stamp = now_ms + int(timeout) * 60_000
        answer |= {"timeout": timeout, "dumplink": ""}
    elif action == "stop":
        stamp = 0
    request = T.ProfileRequest(
        nodeInfo=T.NodeInfo(node=host, port={port}), action=ACTIONS[action], time_stamp=stamp
    )
    return ProfileAsk(request, answer)


def active(requests: list[Any], links: Any, topology_id: str, now: float) -> list[dict[str, Any]]:
    """Storm's profilerActive: the workers profiling now (pending JPROFILE_STOPs), each with
    its dumps' link and Storm's `timestamp` (now minus the request's end, in ms)."""
    out = []
    for r in requests or []:
        port = sorted(r.nodeInfo.port or [0])[0]
        out.append(
            {
                "host": r.nodeInfo.node,
                "port": str(port),
                "dumplink": links.dumps(r.nodeInfo.node, port, topology_id),
                "timestamp": int(now * 1000) - (r.time_stamp or 0),
            }
        )
    return out
