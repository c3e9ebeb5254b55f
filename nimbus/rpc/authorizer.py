"""Who may do what on nimbus: Storm's SimpleACLAuthorizer semantics over plain data.

- nimbus.admins (or a member of nimbus.admins.groups) may do anything.
- nimbus.supervisor.users may do only what a supervisor needs (download code and confs, find
  the leader, Storm 2's daemon-internal calls) and nothing else, however else they are listed.
- User commands (submit, upload, cluster-wide reads) need nimbus.users empty, or the user
  listed in it, or in one of nimbus.groups.
- Topology commands (kill, rebalance, activate, deactivate, setTopologyConf, setLogConfig,
  debug, setWorkerProfiler, uploadNewCredentials and the reads, getLogConfig and
  getComponentPendingProfileActions among them)
  need the topology's submitter, or a user in its topology.users / topology.groups; the
  reads also accept topology.readonly.users / topology.readonly.groups.

The principal is the client certificate's CN and the local user is the same name (Storm's
DefaultPrincipalToLocal); groups come from the OS (Storm's ShellBasedUnixGroupsMapping),
looked up by UnixGroups, the one piece here that does I/O.
"""

from __future__ import annotations

import grp
import os
import pwd
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

from squall.config import ConfigError
from squall.security.mode import security_on

USER_COMMANDS = frozenset(
    {
        "submitTopology",
        "fileUpload",
        "getNimbusConf",
        "getClusterInfo",
        "getLeader",
        "isTopologyNameAllowed",
    }
)
SUPERVISOR_COMMANDS = frozenset({"fileDownload", "getLeader"})
TOPOLOGY_READ_COMMANDS = frozenset(
    {"getTopologyConf", "getTopology", "getUserTopology", "getTopologyInfo"}
)
# Storm 2 read calls for the UI and CLI, listed as Storm's SimpleACLAuthorizer lists them;
# getTopologyHistory, which Storm leaves unchecked, is a user command here
USER_COMMANDS = USER_COMMANDS | {
    "getTopologySummaries",
    "getTopologySummaryByName",
    "getTopologySummary",
    "getSupervisorPageInfo",
    "getOwnerResourceSummaries",
    "getTopologyHistory",
}
TOPOLOGY_READ_COMMANDS = TOPOLOGY_READ_COMMANDS | {"getTopologyPageInfo", "getComponentPageInfo"}
# Storm 2 log levels and debug: getLogConfig is a topology read, the others topology commands
TOPOLOGY_READ_COMMANDS = TOPOLOGY_READ_COMMANDS | {"getLogConfig"}
# Storm 2 blobstore: user commands (nimbus.users may narrow who uses it), then each blob's
# own ACL decides (nimbus/blobs/blob_acl.py); supervisors may use the reads
BLOB_READ_COMMANDS = frozenset(
    {
        "getBlobMeta",
        "beginBlobDownload",
        "downloadBlobChunk",
        "listBlobs",
        "getBlobReplication",
        "isRemoteBlobExists",
    }
)
USER_COMMANDS = (
    USER_COMMANDS
    | BLOB_READ_COMMANDS
    | {
        "beginCreateBlob",
        "beginUpdateBlob",
        "uploadBlobChunk",
        "finishBlobUpload",
        "cancelBlobUpload",
        "setBlobMeta",
        "deleteBlob",
        "updateBlobReplication",
        "createStateInZookeeper",
    }
)
SUPERVISOR_COMMANDS = SUPERVISOR_COMMANDS | BLOB_READ_COMMANDS
# Storm 2's daemon-internal calls, supervisor commands as Storm lists them (nimbus serves
# none of them: nimbus/rpc/daemon_calls.py); profiling: the pending actions are a topology read
SUPERVISOR_COMMANDS = SUPERVISOR_COMMANDS | {
    "getSupervisorAssignments",
    "sendSupervisorWorkerHeartbeats",
    "processWorkerMetrics",
}
TOPOLOGY_READ_COMMANDS = TOPOLOGY_READ_COMMANDS | {"getComponentPendingProfileActions"}
TOPOLOGY_COMMANDS = TOPOLOGY_READ_COMMANDS | {
    "setWorkerProfiler",
    "uploadNewCredentials",
    "sendSupervisorWorkerHeartbeat",
    "killTopology",
    "rebalance",
    "activate",
    "deactivate",
    "setTopologyConf",
    "setLogConfig",
    "debug",
}
SUBMITTER_KEYS = ("topology.submitter.principal", "topology.submitter.user")

SIMPLE, NOOP, DENY = "simple", "noop", "deny"
_PACKAGE = "org.apache.storm.security.auth.authorizer."
KINDS = {
    f"{_PACKAGE}SimpleACLAuthorizer": SIMPLE,
    f"{_PACKAGE}NoopAuthorizer": NOOP,
    f"{_PACKAGE}DenyAuthorizer": DENY,
    "SimpleACLAuthorizer": SIMPLE,
    "NoopAuthorizer": NOOP,
    "DenyAuthorizer": DENY,
}


def authorizer_kind(conf: Mapping[str, Any]) -> str:
    """nimbus.authorizer as one of SIMPLE, NOOP, DENY. Unset: the simple ACL authorizer
    when security is on, none (everyone permitted) when off. An unknown class is an error at
    startup, never a silently open cluster."""
    configured = conf.get("nimbus.authorizer")
    secure = security_on(dict(conf))  # it takes a dict; a copy at startup costs nothing
    if not configured:
        return SIMPLE if secure else NOOP
    if configured not in KINDS:
        known = ", ".join(k for k in KINDS if k.startswith(_PACKAGE))
        raise ConfigError(f"nimbus.authorizer: unknown authorizer {configured!r} (known: {known})")
    kind = KINDS[configured]
    if kind == SIMPLE and not secure:
        raise ConfigError(
            "nimbus.authorizer: SimpleACLAuthorizer judges TLS identities; it needs security: true"
        )
    return kind


def _names(value: Any) -> frozenset[str]:
    if isinstance(value, str):
        return frozenset([value]) if value else frozenset()
    return frozenset(str(v) for v in value or ())


@dataclass(frozen=True)
class Acl:
    admins: frozenset[str] = frozenset()
    admin_groups: frozenset[str] = frozenset()
    supervisors: frozenset[str] = frozenset()
    users: frozenset[str] = frozenset()
    groups: frozenset[str] = frozenset()

    @staticmethod
    def from_conf(conf: Mapping[str, Any]) -> Acl:
        return Acl(
            admins=_names(conf.get("nimbus.admins")),
            admin_groups=_names(conf.get("nimbus.admins.groups")),
            supervisors=_names(conf.get("nimbus.supervisor.users")),
            users=_names(conf.get("nimbus.users")),
            groups=_names(conf.get("nimbus.groups")),
        )


def _listed(user: str, groups: frozenset[str], conf: Mapping[str, Any], keys: tuple) -> bool:
    users_key, groups_key = keys
    return user in _names(conf.get(users_key)) or bool(groups & _names(conf.get(groups_key)))


def permits(
    acl: Acl,
    principal: str | None,
    groups: frozenset[str],
    operation: str,
    topology_conf: Mapping[str, Any] | None,
) -> bool:
    """SimpleACLAuthorizer.permit: may `principal` (member of `groups`) do `operation`, on
    the topology whose conf is `topology_conf` where the operation targets one?"""
    if not principal:  # no certificate, or one with an empty CN: nobody
        return False
    if principal in acl.admins or groups & acl.admin_groups:
        return True
    if principal in acl.supervisors:
        return operation in SUPERVISOR_COMMANDS
    if operation in USER_COMMANDS:
        return not acl.users or principal in acl.users or bool(groups & acl.groups)
    if operation in TOPOLOGY_COMMANDS and topology_conf is not None:
        if principal in {str(topology_conf.get(key) or "") for key in SUBMITTER_KEYS} - {""}:
            return True
        if _listed(principal, groups, topology_conf, ("topology.users", "topology.groups")):
            return True
        return operation in TOPOLOGY_READ_COMMANDS and _listed(
            principal,
            groups,
            topology_conf,
            ("topology.readonly.users", "topology.readonly.groups"),
        )
    return False


def decide(
    kind: str,
    acl: Acl,
    principal: str | None,
    groups: frozenset[str],
    operation: str,
    topology_conf: Mapping[str, Any] | None,
) -> bool:
    if kind == NOOP:
        return True
    if kind == DENY:
        return False
    return permits(acl, principal, groups, operation, topology_conf)


def denial(principal: str | None, operation: str, topology: str | None) -> str:
    who = principal if principal is not None else "an unauthenticated client"
    target = f" on topology {topology!r}" if topology else ""
    return f"{who} is not authorized to {operation}{target}"


class UnixGroups:
    """The OS groups of a local user (none for a principal with no local account), cached
    for storm.group.mapping.service.cache.duration.secs: membership changes show after it."""

    def __init__(self, ttl_secs: float, clock: Callable[[], float]) -> None:
        self.ttl = ttl_secs
        self.clock = clock
        self.cache: dict[str, tuple[float, frozenset[str]]] = {}

    def __call__(self, user: str | None) -> frozenset[str]:
        if user is None:
            return frozenset()
        now = self.clock()
        hit = self.cache.get(user)
        if hit and now - hit[0] < self.ttl:
            return hit[1]
        groups = _lookup_groups(user)
        if len(self.cache) > 1024:
            self.cache.clear()
        self.cache[user] = (now, groups)
        return groups


def _lookup_groups(user: str) -> frozenset[str]:
    try:
        gid = pwd.getpwnam(user).pw_gid
        ids = os.getgrouplist(user, gid)
    except (KeyError, OSError):
        return frozenset()
    names = set()
    for group_id in ids:
        try:
            names.add(grp.getgrgid(group_id).gr_name)
        except KeyError:
            continue
    return frozenset(names)
