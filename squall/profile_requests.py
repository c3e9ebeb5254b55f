"""Storm's worker profiling requests (setWorkerProfiler), as plain data: what a valid request
is, how it is stored in ZooKeeper (/profilerconfig/<topology-id>/<host>_<port>_<action>, one
node per slot and action as Storm's cluster state keeps them, so a newer request for the same
slot and action replaces the older), which requests Storm's UI sees as pending, and when a
request is garbage.

Storm's UI starts profiling with a JPROFILE_STOP request whose time_stamp is when profiling
ends, and asks for the other actions with time_stamp "now". So a JPROFILE_STOP is listed as
pending until its time_stamp; every request stays stored GRACE_MS past its time_stamp, so the
worker it names can still carry it out (the worker deletes what it has done) and a request no
worker took (a slot that moved) does not stay for ever.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterable
from dataclasses import dataclass

# Storm's ProfileAction, in its IDL's order (the enum's values)
ACTIONS = (
    "JPROFILE_STOP",
    "JPROFILE_START",
    "JPROFILE_DUMP",
    "JMAP_DUMP",
    "JSTACK_DUMP",
    "JVM_RESTART",
)
STOP = "JPROFILE_STOP"
GRACE_MS = 60_000
MAX_STORED = 256  # per topology: a client cannot fill ZooKeeper with requests for made-up hosts
HOST = re.compile(r"[A-Za-z0-9._:\[\]-]{1,255}")  # a host name or address: a safe node name


class ProfileRequestError(ValueError):
    """A request nimbus refuses, or a stored node that is not a request."""


@dataclass(frozen=True)
class ProfileRequest:
    host: str
    port: int
    action: str  # one of ACTIONS
    time_stamp_ms: int

    @property
    def node(self) -> str:
        """Its node's name under /profilerconfig/<topology-id> (Storm's naming)."""
        return f"{self.host}_{self.port}_{self.action}"


def request(
    host: str | None,
    ports: Iterable[int] | None,
    action: int | None,
    time_stamp: int | None,
    now_ms: int,
) -> ProfileRequest:
    """A Thrift ProfileRequest's parts checked: one worker (a host and exactly one port, as
    Storm's UI sends) and a known action; no time_stamp means now."""
    if not isinstance(host, str) or not HOST.fullmatch(host) or host.startswith("."):
        raise ProfileRequestError(f"setWorkerProfiler: bad host {host!r} in nodeInfo")
    port_set = sorted(set(ports or ()))
    if len(port_set) != 1 or not 0 < port_set[0] < 65536:
        raise ProfileRequestError(
            f"setWorkerProfiler: nodeInfo needs exactly one port, not {port_set}"
        )
    if action is None or not 0 <= action < len(ACTIONS):
        raise ProfileRequestError(f"setWorkerProfiler: unknown profile action {action!r}")
    stamp = now_ms if time_stamp is None else int(time_stamp)
    return ProfileRequest(host, port_set[0], ACTIONS[action], stamp)


def encode(r: ProfileRequest) -> bytes:
    return json.dumps(
        {"host": r.host, "port": r.port, "action": r.action, "time_stamp": r.time_stamp_ms},
        sort_keys=True,
    ).encode()


def decode(data: bytes | None, where: str) -> ProfileRequest:
    try:
        raw = json.loads(data or b"")
        r = ProfileRequest(
            str(raw["host"]), int(raw["port"]), str(raw["action"]), int(raw["time_stamp"])
        )
    except (ValueError, TypeError, KeyError) as exc:
        raise ProfileRequestError(f"{where}: not a profile request ({exc})") from exc
    if r.action not in ACTIONS:
        raise ProfileRequestError(f"{where}: unknown profile action {r.action!r}")
    return r


def listed(r: ProfileRequest, now_ms: int) -> bool:
    """Pending as Storm's UI reads it: a profiler runs until its JPROFILE_STOP's time_stamp;
    any other action until its worker has done it (or GRACE_MS passed)."""
    return now_ms < r.time_stamp_ms if r.action == STOP else not garbage(r, now_ms)


def garbage(r: ProfileRequest, now_ms: int) -> bool:
    """Past any use: GRACE_MS after its time_stamp (its worker had that long to act)."""
    return now_ms >= r.time_stamp_ms + GRACE_MS


def pending(
    requests: Iterable[ProfileRequest],
    slots: Iterable[tuple[str, int]],
    action: str,
    now_ms: int,
) -> list[ProfileRequest]:
    """Storm's getComponentPendingProfileActions: for each (host, port) the component runs
    on, the newest listed request of `action` there."""
    wanted = set(slots)
    newest: dict[tuple[str, int], ProfileRequest] = {}
    for r in requests:
        key = (r.host, r.port)
        if key not in wanted or r.action != action or not listed(r, now_ms):
            continue
        if key not in newest or r.time_stamp_ms > newest[key].time_stamp_ms:
            newest[key] = r
    return [newest[key] for key in sorted(newest)]


def for_worker(
    requests: Iterable[ProfileRequest], hosts: Iterable[str], port: int, now_ms: int
) -> list[ProfileRequest]:
    """The requests one worker (known by any of `hosts` on `port`) should carry out now,
    oldest first."""
    names = set(hosts)
    mine = [r for r in requests if r.host in names and r.port == port and not garbage(r, now_ms)]
    return sorted(mine, key=lambda r: (r.time_stamp_ms, r.action))
