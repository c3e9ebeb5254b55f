"""Who may do what on each ZooKeeper node: one table from path pattern to permissions per role.

Every node a secure cluster creates takes its ACL from this table (squall.zk.connection's client
asks it on every create: makepath's parents, kazoo's election recipe and nimbus's transactions
included), so "only nimbus writes assignments" and "a supervisor writes only what supervisors
and their workers own" are properties of the table, checked without a server. Nobody else
(world, anonymous) gets anything.

Two roles (squall.zk.identity): "nimbus" (nimbus daemons and tools acting for them) and
"supervisor" (every supervisor, sharing one login as Storm's supervisors do). Workers have
neither: each logs in as its topology (Storm's per-topology ZooKeeper auth), which the table
grants only that topology's own nodes (the path's segment after the first names it), as its
submitter, who keeps the consumer groups its topologies make, and as the workers' shared
login, which reads the leader epoch and makes consumer groups. ZooKeeper checks CREATE and
DELETE on the parent, READ and WRITE on the node itself; recursive deletes also need READ on
each node deleted (to list its children).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
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
    host: int = 0  # the creating supervisor host's own identity (zk_identity.host_id)
    topology: int = 0  # the topology the path names (its workers' login)
    workers: int = 0  # the login every worker shares
    user: int = 0  # the submitter whose worker made the node (its topologies' shared login)

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
# Nimbus writes it; supervisors and the topology's own workers read it.
TOPOLOGY_READS = Grant(nimbus=ALL, supervisor=READ, topology=READ)

# Patterns are the path below the cluster's root, one "*" per segment, "**" for any deeper
# rest. First match wins; a path matching nothing (including the root's own parents) is
# nimbus's.
TABLE: tuple[tuple[str, Grant], ...] = (
    # the root: its ACL differs from the one before per-topology logins, so the first start
    # of a nimbus that has them gives every older node its table ACL (zk_acl_client.repair_acls)
    ("", Grant(nimbus=ALL, supervisor=READ, workers=READ)),
    ("storms", NIMBUS_OWNED),
    ("storms/*", TOPOLOGY_READS),
    ("tasks", NIMBUS_OWNED),
    ("tasks/*", TOPOLOGY_READS),
    ("tasks/*/*", TOPOLOGY_READS),
    ("assignments", NIMBUS_OWNED),
    ("assignments/*", TOPOLOGY_READS),
    ("nimbus", NIMBUS_OWNED),
    # workers check an assignment's epoch against it (the only global node they read)
    ("nimbus/epoch", Grant(nimbus=ALL, supervisor=READ, workers=READ)),
    ("nimbus/*", NIMBUS_OWNED),  # epoch, leader (the election)
    ("nimbus/leader/*", NIMBUS_OWNED),
    ("nimbuses", NIMBUS_OWNED),
    ("nimbuses/*", NIMBUS_OWNED),
    ("credentials", NIMBUS_OWNED),
    # a topology's CURVE keypair: its own workers read it, no other topology's; every
    # supervisor host can (SECURITY.md says so)
    ("credentials/*", TOPOLOGY_READS),
    # a topology's dynamic log levels: nimbus writes them (setLogConfig), workers read them
    ("logconfigs", NIMBUS_OWNED),
    ("logconfigs/*", TOPOLOGY_READS),
    # profiling requests: nimbus writes them (setWorkerProfiler); the worker a request names
    # reads it and deletes it once done (DELETE on the topology's directory), as Storm's
    # supervisor does
    ("profilerconfig", NIMBUS_OWNED),
    ("profilerconfig/*", Grant(nimbus=ALL, supervisor=READ | DELETE, topology=READ | DELETE)),
    ("profilerconfig/*/*", TOPOLOGY_READS),
    # uploadNewCredentials' map: nimbus writes it, the topology's workers read it (as the
    # CURVE keys, every supervisor host can read it: SECURITY.md)
    ("usercredentials", NIMBUS_OWNED),
    ("usercredentials/*", TOPOLOGY_READS),
    ("supervisors", SUPERVISOR_CREATES),
    ("supervisors/*", HOST_OWNED),  # a supervisor's ephemeral registration
    ("taskbeats", NIMBUS_OWNED),
    # nimbus creates it with the topology; the topology's workers beat in it
    # (DELETE: a beat left by a worker of before per-topology logins is made anew)
    ("taskbeats/*", Grant(nimbus=ALL, supervisor=CREATE | READ, topology=CREATE | READ | DELETE)),
    # a worker's heartbeat: its topology's alone to write, read by nimbus and supervisors
    ("taskbeats/*/*", Grant(nimbus=READ, supervisor=READ, topology=ALL)),
    ("errors", SUPERVISOR_CREATES),
    # nimbus creates it with the topology (a worker may not create under /errors)
    ("errors/*", Grant(nimbus=ALL, supervisor=ALL, topology=CREATE | READ)),
    ("errors/*/*", Grant(nimbus=READ, supervisor=ALL, topology=ALL)),
    # partition owners, offsets and cuts of sources, by consumer group: any worker may make a
    # group; the group is its submitter's, whose topologies keep it (a group outlives its
    # topology: a resubmitted one goes on from its offsets)
    ("consumers", Grant(nimbus=ALL, supervisor=CREATE | READ, workers=CREATE | READ)),
    ("consumers/**", Grant(nimbus=READ, supervisor=ALL, user=ALL)),
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


def topology_of(path: str, root: str) -> str | None:
    """The topology a per-topology node names (/errors/<id>/..., /credentials/<id>)."""
    rest = relative(path, root)
    parts = rest.split("/") if rest else []
    return parts[1] if len(parts) > 1 else None


def acl_for(
    path: str,
    root: str,
    ids: Mapping[str, str],
    super_id: Id | None = None,
    host_id: str | None = None,
    topology_id: Callable[[str], str | None] | None = None,
    workers_id: str | None = None,
    user_id: str | None = None,
) -> list[ACL]:
    """The ACL a node at `path` is created with: each role's digest id (`ids`, role ->
    "user:base64(sha1)") with its permissions from the table, the creating host's own id
    (`host_id`) where the table names the host, the digest id of the topology the path names
    (`topology_id(tid)`; None where the creator cannot name it) and the workers' shared id
    where the table names them, the creating worker's submitter (`user_id`) where the table
    names the user, and the superACL with all. A host-owned node made by a client
    without a host identity is the role's, as before host identities."""
    grant = grant_for(path, root)
    if grant.host and host_id is None:
        grant = SUPERVISOR_OWNED
    acl = [ACL(grant.of(role), Id("digest", ids[role])) for role in ROLES if grant.of(role)]
    if grant.host and host_id is not None:
        acl.append(ACL(grant.host, Id("digest", host_id)))
    tid = topology_of(path, root) if grant.topology and topology_id is not None else None
    topology = topology_id(tid) if topology_id is not None and tid else None
    if topology is not None:
        acl.append(ACL(grant.topology, Id("digest", topology)))
    if grant.workers and workers_id is not None:
        acl.append(ACL(grant.workers, Id("digest", workers_id)))
    if grant.user and user_id is not None:
        acl.append(ACL(grant.user, Id("digest", user_id)))
    if super_id is not None:
        acl.append(ACL(ALL, super_id))
    return acl
