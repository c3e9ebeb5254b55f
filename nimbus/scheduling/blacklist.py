"""Storm's BlacklistScheduler for squall: a supervisor (or one of its slots) whose workers keep
failing is taken out of scheduling for a while, so nimbus stops putting tasks back on a
broken disk every launch timeout while other slots sit free. Pure: the failures nimbus
observed and its monotonic clock come in; nimbus/core/reassign.py feeds it and applies it.

A failure is one worker assignment whose tasks nimbus declared dead (they never beat within
nimbus.task.launch.secs, or stopped beating): a worker that cannot start because its
storm.local.dir is full or read-only, a dependency is missing, or its credentials are bad.
One assignment counts once however many rounds it stays dead (its start instant is part of
its key).

Transitions, per supervisor (blacklist.scheduler.assume.supervisor.bad.based.on.bad.slot
true, Storm's default) or per slot (false):
- blacklist.scheduler.tolerance.count failures within blacklist.scheduler.tolerance.time.secs
  blacklist it; when it returns the failures that put it there no longer count;
- a failure older than the tolerance window no longer counts;
- after blacklist.scheduler.resume.time.secs it returns to service;
- as in Storm's DefaultBlacklistStrategy, when the healthy slots cannot hold what the
  topologies ask for, the earliest-blacklisted supervisors are released early (a cluster with
  every supervisor blacklisted still runs its topologies).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field, replace
from typing import Any

from squall.nimbus.scheduling.scheduling_input import Cluster

STORM_STRATEGIES = (
    "org.apache.storm.scheduler.blacklist.strategies.DefaultBlacklistStrategy",
    "org.apache.storm.scheduler.blacklist.strategies.RasBlacklistStrategy",
    "default",
)
OFF = "none"


class BlacklistConfigError(ValueError):
    """A blacklist.scheduler.* value nimbus cannot use."""


@dataclass(frozen=True)
class BlacklistSettings:
    tolerance_secs: float = 300.0
    tolerance_count: int = 2
    resume_secs: float = 1800.0
    whole_supervisor: bool = True
    enabled: bool = True

    @staticmethod
    def from_conf(conf: Mapping[str, Any]) -> BlacklistSettings:
        """Missing keys take the defaults above; bad values raise BlacklistConfigError."""
        d = BlacklistSettings()
        strategy = conf.get("blacklist.scheduler.strategy") or STORM_STRATEGIES[0]
        if strategy not in (*STORM_STRATEGIES, OFF):
            raise BlacklistConfigError(
                f"blacklist.scheduler.strategy: {strategy!r} is not one of {STORM_STRATEGIES}"
                f" or {OFF!r}"
            )
        whole = conf.get("blacklist.scheduler.assume.supervisor.bad.based.on.bad.slot", True)
        return BlacklistSettings(
            tolerance_secs=_number(
                conf, "blacklist.scheduler.tolerance.time.secs", d.tolerance_secs
            ),
            tolerance_count=int(
                _number(conf, "blacklist.scheduler.tolerance.count", d.tolerance_count)
            ),
            resume_secs=_number(conf, "blacklist.scheduler.resume.time.secs", d.resume_secs),
            whole_supervisor=bool(whole),
            enabled=strategy != OFF,
        )


def _number(conf: Mapping[str, Any], key: str, default: float) -> float:
    value = conf.get(key)
    if value is None:
        return default
    if isinstance(value, bool) or not isinstance(value, (int, float)) or value < 1:
        raise BlacklistConfigError(f"{key} must be a number of at least 1, got {value!r:.40}")
    return float(value)


@dataclass(frozen=True)
class Failure:
    """One worker assignment on (supervisor, port) whose tasks were declared dead at `at`;
    `started` (when it was assigned) tells one assignment from the next."""

    supervisor: str
    port: int
    topology: str
    started: float
    at: float
    reason: str

    @property
    def key(self) -> tuple[str, int, str, float]:
        return (self.supervisor, self.port, self.topology, self.started)


@dataclass(frozen=True)
class Listed:
    """A blacklisted supervisor; `ports` empty: the whole supervisor, else only those slots."""

    since: float
    until: float
    reason: str
    ports: frozenset[int] = frozenset()
    topologies: frozenset[str] = frozenset()  # whose failed workers put it here


@dataclass(frozen=True)
class Blacklist:
    failures: tuple[Failure, ...] = ()
    listed: Mapping[str, Listed] = field(default_factory=dict)

    def excluded_ports(self, supervisor: str) -> frozenset[int] | None:
        """None: the supervisor is not blacklisted; empty: all of it is; else those ports."""
        entry = self.listed.get(supervisor)
        return None if entry is None else entry.ports

    def reasons(self) -> dict[str, str]:
        """supervisor -> why it is out of service, for the summaries."""
        return {sid: entry.reason for sid, entry in sorted(self.listed.items())}


@dataclass(frozen=True)
class Change:
    """One supervisor entering or leaving the blacklist, for nimbus's log."""

    supervisor: str
    listed: bool
    reason: str


def observe(
    blacklist: Blacklist, settings: BlacklistSettings, failures: Iterable[Failure], now: float
) -> tuple[Blacklist, list[Change]]:
    """Resume what served its time, fold in this round's failures (a known one counts once),
    forget those past the window, and blacklist what reached the tolerance count.

    A topology whose workers fail on two supervisors within the window is broken itself
    (bad code, a crashing component), not the supervisors: its failures count against none,
    and a supervisor blacklisted for its failures alone returns at once. So one user's
    broken topology cannot take the cluster's supervisors out of service."""
    if not settings.enabled:
        return Blacklist(), [Change(s, False, "blacklisting is off") for s in blacklist.listed]
    changes: list[Change] = []
    listed = dict(blacklist.listed)
    known = {f.key for f in blacklist.failures}
    fresh = [f for f in failures if f.key not in known]
    horizon = now - settings.tolerance_secs
    kept = [f for f in (*blacklist.failures, *fresh) if f.at > horizon]
    for sid in sorted(listed):
        if listed[sid].until <= now:  # back with a clean count
            changes.append(Change(sid, False, "resume time passed"))
            kept = [f for f in kept if f.supervisor != sid or f.at > listed[sid].since]
            del listed[sid]
    broken = _broken_topologies(kept, listed)
    for sid in sorted(listed):
        if listed[sid].topologies and listed[sid].topologies <= broken:
            changes.append(Change(sid, False, "its failed workers fail elsewhere too"))
            del listed[sid]
    by_key: dict[tuple[str, int], list[Failure]] = {}
    for f in kept:
        if f.topology not in broken and not _covered(listed, f):
            port = -1 if settings.whole_supervisor else f.port
            by_key.setdefault((f.supervisor, port), []).append(f)
    for (sid, port), mine in sorted(by_key.items()):
        if len(mine) < settings.tolerance_count:
            continue
        latest = max(mine, key=lambda f: f.at)
        where = "supervisor" if port < 0 else f"slot {port} of supervisor"
        reason = (
            f"blacklisted: {len(mine)} failed workers within "
            f"{settings.tolerance_secs:.0f}s on {where} {sid} (last: {latest.reason})"
        )
        old = listed.get(sid)
        ports = frozenset() if port < 0 else frozenset({port})
        causes = frozenset(f.topology for f in mine)
        if old is not None:  # another slot of a partly blacklisted supervisor
            ports, causes = old.ports | ports, old.topologies | causes
        listed[sid] = Listed(now, now + settings.resume_secs, reason, ports, causes)
        changes.append(Change(sid, True, reason))
    return Blacklist(tuple(kept), listed), changes


def _broken_topologies(kept: Iterable[Failure], listed: Mapping[str, Listed]) -> set[str]:
    """Topologies with failures on two supervisors or more (a blacklisting counts as one)."""
    where: dict[str, set[str]] = {}
    for sid, entry in listed.items():
        for tid in entry.topologies:
            where.setdefault(tid, set()).add(sid)
    for f in kept:
        where.setdefault(f.topology, set()).add(f.supervisor)
    return {tid for tid, sids in where.items() if len(sids) > 1}


def _covered(listed: Mapping[str, Listed], failure: Failure) -> bool:
    entry = listed.get(failure.supervisor)
    return entry is not None and (not entry.ports or failure.port in entry.ports)


def release_for_shortage(
    blacklist: Blacklist, needed_slots: int, free_slots: Mapping[str, int]
) -> tuple[Blacklist, list[Change]]:
    """Storm's releaseBlacklistWhenNeeded: when the topologies need more slots than the
    healthy free ones (`free_slots`, per blacklisted supervisor: what releasing it would add,
    key "" for the healthy ones), release the earliest-blacklisted supervisors until the
    shortage is covered or none is left."""
    shortage = needed_slots - free_slots.get("", 0)
    if shortage <= 0 or not blacklist.listed:
        return blacklist, []
    listed = dict(blacklist.listed)
    changes = []
    for sid in sorted(listed, key=lambda s: (listed[s].since, s)):
        if shortage <= 0:
            break
        if sid not in free_slots:
            continue
        shortage -= free_slots[sid]
        del listed[sid]
        changes.append(Change(sid, False, "released early: the healthy slots are too few"))
    return replace(blacklist, listed=listed), changes


def in_service(cluster: Cluster, blacklist: Blacklist) -> Cluster:
    """The cluster the scheduler may use: blacklisted supervisors left out, or only their
    blacklisted slots (every task on them moves, live ones too, as Storm's DefaultScheduler
    frees the slots of a blacklisted host)."""
    hosts = {}
    for sid, host in cluster.hosts.items():
        out = blacklist.excluded_ports(sid)
        if out is None:
            hosts[sid] = host
        elif out:
            hosts[sid] = replace(host, ports=tuple(p for p in host.ports if p not in out))
    return replace(cluster, hosts=hosts)
