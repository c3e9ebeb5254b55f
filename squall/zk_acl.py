"""Who may do what on each ZooKeeper node: one table from path pattern to permissions per role.

Every node a secure cluster creates takes its ACL from this table (squall.zk's client asks it
on every create: makepath's parents, kazoo's election recipe and nimbus's transactions
included), so "only nimbus writes assignments" and "a supervisor writes only what supervisors
and their workers own" are properties of the table, checked without a server. Nobody else
(world, anonymous) gets anything.

Two roles (squall.zk_identity): "nimbus" (nimbus daemons and tools acting for them) and
"supervisor" (every supervisor and the workers it starts, sharing one login as Storm's
supervisors do). ZooKeeper checks CREATE and DELETE on the parent, READ and WRITE on the node
itself; recursive deletes also need READ on each node deleted (to list its children).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

from kazoo.security import ACL, Id, Permissions

NIMBUS = "nimbus"
SUPERVISOR = "supervisor"
ROLES = (NIMBUS, SUPERVISOR)

READ, WRITE, CREATE, DELETE, ALL = (
    Permissions.READ,
    Permissions.WRITE,
    Permissions.CREATE,
    Permissions.DELETE,
    Permissions.ALL,
)


@dataclass(frozen=True)
class Grant:
    """Permissions (kazoo's Permissions bits) of each role on a node."""

    nimbus: int
    supervisor: int
    host: int = 0  # the creating supervisor host's own identity (zk_identity.own_identity)

    def of(self, role: str) -> int:
        return self.nimbus if role == NIMBUS else self.supervisor


# Nimbus writes it; supervisors and workers only read it.
NIMBUS_OWNED = Grant(nimbus=ALL, supervisor=READ)
# A directory where supervisors (or their workers) create children; nimbus owns the directory.
SUPERVISOR_CREATES = Grant(nimbus=ALL, supervisor=CREATE | READ)
# A node a supervisor or worker created: theirs; nimbus reads it (and removes what is under it
# when DELETE is named: a killed topology's error nodes).
SUPERVISOR_OWNED = Grant(nimbus=READ, supervisor=ALL)
# A node only the supervisor host that created it may change (its registration, its workers'
# heartbeats): the other supervisors share the role's login, so the role may only read it.
HOST_OWNED = Grant(nimbus=READ, supervisor=READ, host=ALL)

# Patterns are the path below the cluster's root, one "*" per segment, "**" for any deeper
# rest. First match wins; a path matching nothing (including the root's own parents) is
# nimbus's.
TABLE: tuple[tuple[str, Grant], ...] = (
    ("", NIMBUS_OWNED),  # the root
    ("storms", NIMBUS_OWNED),
    ("storms/*", NIMBUS_OWNED),
    ("tasks", NIMBUS_OWNED),
    ("tasks/*", NIMBUS_OWNED),
    ("tasks/*/*", NIMBUS_OWNED),
    ("assignments", NIMBUS_OWNED),
    ("assignments/*", NIMBUS_OWNED),
    ("nimbus", NIMBUS_OWNED),
    ("nimbus/*", NIMBUS_OWNED),  # epoch, leader (the election)
    ("nimbus/leader/*", NIMBUS_OWNED),
    ("nimbuses", NIMBUS_OWNED),
    ("nimbuses/*", NIMBUS_OWNED),
    ("credentials", NIMBUS_OWNED),
    # a topology's CURVE keypair: workers read it as their supervisor's role, so every
    # supervisor host can read every topology's keys (SECURITY.md says so)
    ("credentials/*", NIMBUS_OWNED),
    # a topology's dynamic log levels: nimbus writes them (setLogConfig), workers read them
    ("logconfigs", NIMBUS_OWNED),
    ("logconfigs/*", NIMBUS_OWNED),
    # profiling requests: nimbus writes them (setWorkerProfiler); the worker a request names
    # reads it and deletes it once done (DELETE on the topology's directory), as Storm's
    # supervisor does
    ("profilerconfig", NIMBUS_OWNED),
    ("profilerconfig/*", Grant(nimbus=ALL, supervisor=READ | DELETE)),
    ("profilerconfig/*/*", NIMBUS_OWNED),
    # uploadNewCredentials' map: nimbus writes it, the topology's workers read it (as the
    # CURVE keys, every supervisor host can read it: SECURITY.md)
    ("usercredentials", NIMBUS_OWNED),
    ("usercredentials/*", NIMBUS_OWNED),
    ("supervisors", SUPERVISOR_CREATES),
    ("supervisors/*", HOST_OWNED),  # a supervisor's ephemeral registration
    ("taskbeats", NIMBUS_OWNED),
    ("taskbeats/*", SUPERVISOR_CREATES),  # nimbus creates it with the topology
    ("taskbeats/*/*", HOST_OWNED),  # a worker's heartbeat
    ("errors", SUPERVISOR_CREATES),
    ("errors/*", Grant(nimbus=READ | DELETE, supervisor=ALL)),  # a worker creates it
    ("errors/*/*", SUPERVISOR_OWNED),
    ("consumers", SUPERVISOR_CREATES),
    ("consumers/**", SUPERVISOR_OWNED),  # partition owners, offsets and cuts of sources
)


def relative(path: str, root: str) -> str | None:
    """`path` below `root` ("" for the root itself), or None outside it."""
    root = "/" + root.strip("/")
    path = "/" + path.strip("/")
    if path == root:
        return ""
    if path.startswith(root.rstrip("/") + "/"):
        return path[len(root.rstrip("/")) + 1 :]
    return None


def _matches(pattern: str, rest: str) -> bool:
    want = pattern.split("/") if pattern else []
    have = rest.split("/") if rest else []
    for i, segment in enumerate(want):
        if segment == "**":
            return len(have) > i
        if i >= len(have) or (segment != "*" and segment != have[i]):
            return False
    return len(want) == len(have)


def grant_for(path: str, root: str) -> Grant:
    rest = relative(path, root)
    if rest is None:
        return NIMBUS_OWNED
    return next((grant for pattern, grant in TABLE if _matches(pattern, rest)), NIMBUS_OWNED)


def acl_for(
    path: str,
    root: str,
    ids: Mapping[str, str],
    super_id: Id | None = None,
    host_id: str | None = None,
) -> list[ACL]:
    """The ACL a node at `path` is created with: each role's digest id (`ids`, role ->
    "user:base64(sha1)") with its permissions from the table, the creating host's own id
    (`host_id`) where the table names the host, and the superACL with all. A host-owned node
    made by a client without a host identity is the role's, as before host identities."""
    grant = grant_for(path, root)
    if grant.host and host_id is None:
        grant = SUPERVISOR_OWNED
    acl = [ACL(grant.of(role), Id("digest", ids[role])) for role in ROLES if grant.of(role)]
    if grant.host and host_id is not None:
        acl.append(ACL(grant.host, Id("digest", host_id)))
    if super_id is not None:
        acl.append(ACL(ALL, super_id))
    return acl
