"""The ZooKeeper ACL table (squall/zk/acl.py) against what each daemon does, and the role
identity files (squall/zk/identity.py).

ZooKeeper checks CREATE and DELETE on the parent, READ and WRITE on the node itself; the
operations below are every create, set, delete and read the daemons and workers make
(nimbus/cluster_state.py, supervisor/daemon.py, worker/zk_agent.py, squall/recipes/)."""

from __future__ import annotations

import stat

import pytest
from kazoo.security import ACL, Id, make_digest_acl_credential

from squall.config import ConfigError, cluster_conf, load_defaults, review
from squall.nimbus.reads.redaction import REDACTED, redacted
from squall.zk.acl import (
    ALL,
    CREATE,
    DELETE,
    NIMBUS,
    NIMBUS_OWNED,
    READ,
    SUPERVISOR,
    TABLE,
    WRITE,
    acl_for,
    grant_for,
    relative,
)
from squall.zk.identity import (
    HOST_KEY,
    IDS_FILE,
    ZkIdentityError,
    component_conf,
    create_once,
    ensure_zk_identities,
    load_identity,
    load_worker_identity,
    role_identities,
    secret_file,
    without_zk_logins,
)
from squall.zk.layout import ZkLayout

ROOT = "/squall"
L = ZkLayout(ROOT)
TID = "t-1-2"
NEEDS = {"create": CREATE, "delete": DELETE, "set": WRITE, "read": READ}


def parent(path: str) -> str:
    return path.rsplit("/", 1)[0] or "/"


HOST = "host"  # the supervisor host that created a node, logged in as itself too
TOPOLOGY = "topology"  # a worker, logged in as the topology the path names
WORKERS = "workers"  # a worker, logged in as the workers' shared login
USER = "user"  # a worker, logged in as its submitter (whose worker made the node)


def allowed(role: str, op: str, path: str, root: str = ROOT) -> bool:
    where = parent(path) if op in ("create", "delete") else path
    grant = grant_for(where, root)
    held = {
        HOST: grant.of(SUPERVISOR) | grant.host,
        TOPOLOGY: grant.topology,
        WORKERS: grant.workers,
        USER: grant.user,
    }.get(role, grant.of(role))
    return bool(held & NEEDS[op])


# (role, operation, path): what the cluster does, each of which must be allowed.
DONE = [
    *((NIMBUS, "create", p) for p in (L.storms, L.tasks_root, L.assignments, L.supervisors)),
    *((NIMBUS, "create", p) for p in (L.taskbeats_root, L.errors_root, L.consumers_root)),
    (NIMBUS, "create", L.nimbuses),
    (NIMBUS, "create", L.nimbus_epoch),
    (NIMBUS, "set", L.nimbus_epoch),
    (NIMBUS, "create", L.nimbus_leader + "/abc__lock__"),
    (NIMBUS, "read", L.nimbus_leader),
    (NIMBUS, "create", L.storm(TID)),
    (NIMBUS, "set", L.storm(TID)),
    (NIMBUS, "create", L.tasks(TID)),
    (NIMBUS, "create", L.task(TID, 3)),
    (NIMBUS, "delete", L.task(TID, 3)),
    (NIMBUS, "create", L.taskbeats(TID)),
    (NIMBUS, "create", L.errors(TID)),
    (NIMBUS, "create", L.assignment(TID)),
    (NIMBUS, "set", L.assignment(TID)),
    (NIMBUS, "delete", L.assignment(TID)),
    (NIMBUS, "delete", L.storm(TID)),
    (NIMBUS, "create", f"{L.nimbuses}/127.0.0.1:6627"),
    (NIMBUS, "delete", f"{L.nimbuses}/127.0.0.1:6627"),
    # remove_topology: recursive deletes list (READ) and delete every node of the subtrees
    *((NIMBUS, "read", p) for p in (L.tasks(TID), L.taskbeats(TID), L.errors(TID))),
    (NIMBUS, "delete", L.tasks(TID)),
    (NIMBUS, "delete", L.taskbeats(TID)),
    (NIMBUS, "delete", L.errors(TID)),
    (NIMBUS, "delete", L.taskbeat(TID, "s1", 6700)),
    (NIMBUS, "read", L.taskbeat(TID, "s1", 6700)),
    (NIMBUS, "delete", L.errors(TID) + "/split"),
    (NIMBUS, "read", L.errors(TID) + "/split"),
    (NIMBUS, "read", L.supervisor("s1")),
    (NIMBUS, "read", L.supervisors),
    # setLogConfig: nimbus writes /logconfigs/<id>, removes it with the topology
    (NIMBUS, "create", L.logconfigs_root),
    (NIMBUS, "create", L.logconfig(TID)),
    (NIMBUS, "set", L.logconfig(TID)),
    (NIMBUS, "read", L.logconfig(TID)),
    (NIMBUS, "delete", L.logconfig(TID)),
    # a supervisor
    (SUPERVISOR, "create", L.supervisor("s1")),
    *((SUPERVISOR, "read", p) for p in (L.assignments, L.assignment(TID), L.nimbus_epoch)),
    (SUPERVISOR, "read", L.taskbeat(TID, "s1", 6700)),
    *((SUPERVISOR, "read", p) for p in (L.storm(TID), L.tasks(TID), L.task(TID, 3))),
    (SUPERVISOR, "create", L.errors(TID)),  # report_error's makepath
    (SUPERVISOR, "create", L.errors(TID) + "/supervisor"),
    (SUPERVISOR, "set", L.errors(TID) + "/supervisor"),
    (SUPERVISOR, "create", L.consumer_owner("g", "files", "p0")),  # as tools may
    # a worker, as its topology: everything of that topology it reads or writes
    *((TOPOLOGY, "read", p) for p in (L.storm(TID), L.tasks(TID), L.task(TID, 3))),
    *((TOPOLOGY, "read", p) for p in (L.assignment(TID), L.credentials(TID))),
    *((TOPOLOGY, "read", p) for p in (L.logconfig(TID), L.usercredentials(TID))),
    *((TOPOLOGY, "read", p) for p in (L.profilerconfig(TID), L.profilerconfig(TID) + "/r")),
    (TOPOLOGY, "delete", L.profilerconfig(TID) + "/r"),
    (TOPOLOGY, "read", L.taskbeats(TID)),
    (TOPOLOGY, "read", L.taskbeat(TID, "s1", 6700)),
    (TOPOLOGY, "create", L.taskbeat(TID, "s1", 6700)),
    (TOPOLOGY, "set", L.taskbeat(TID, "s1", 6700)),
    (TOPOLOGY, "delete", L.taskbeat(TID, "s1", 6700)),  # one of before per-topology logins
    (TOPOLOGY, "create", L.errors(TID) + "/split"),
    (TOPOLOGY, "set", L.errors(TID) + "/split"),
    (TOPOLOGY, "read", L.errors(TID) + "/split"),
    # as the workers' shared login
    (WORKERS, "read", L.nimbus_epoch),
    (WORKERS, "create", "/squall/consumers/g"),
    # as its submitter, in a consumer group its topologies made
    (USER, "create", "/squall/consumers/g/owners"),
    (USER, "create", L.consumer_owner("g", "files", "p0")),
    (USER, "delete", L.consumer_owner("g", "files", "p0")),
    (USER, "create", L.consumer_offset("g", "files", "p0")),
    (USER, "set", L.consumer_offset("g", "files", "p0")),
    (USER, "read", L.consumer_offset("g", "files", "p0")),
    (USER, "set", L.consumer_cuts("g", "files", "p0")),
]

# What a worker's logins never allow: writing what nimbus or a supervisor owns, making a
# topology's subtree or a registration
WORKER_FORBIDDEN = [
    *(("set", p) for p in (L.assignment(TID), L.storm(TID), L.credentials(TID), ROOT)),
    *(("set", p) for p in (L.usercredentials(TID), L.logconfig(TID), L.nimbus_epoch)),
    ("create", L.supervisor("fake")),
    ("create", L.errors("other-1-1")),
    ("create", L.taskbeats("other-1-1")),
    ("create", L.credentials("other-1-1")),
    ("create", L.task(TID, 99)),
    ("delete", L.errors(TID)),
    ("delete", L.taskbeats(TID)),
    ("read", L.supervisor("s1")),
    ("read", L.assignments),
    ("read", L.credentials_root),
]

# What a supervisor (or a worker, or whoever stole their login) must never do.
FORBIDDEN = [
    *(("set", p) for p in (L.assignment(TID), L.storm(TID), L.nimbus_epoch, ROOT)),
    *(("create", p) for p in (L.assignment("forged-1-1"), L.storm("x-1-1"), L.task(TID, 99))),
    *(("delete", p) for p in (L.assignment(TID), L.storm(TID), L.nimbus_epoch)),
    ("create", f"{L.nimbuses}/x"),
    ("create", L.nimbus_leader + "/x__lock__"),
    ("create", L.taskbeats("other-1-1")),
    ("create", L.tasks("other-1-1")),
    ("create", "/squall/anything-new"),
    ("delete", L.taskbeats(TID)),
    ("delete", L.supervisors),
    ("set", L.logconfig(TID)),
    ("create", L.logconfig("other-1-1")),
    ("delete", L.logconfig(TID)),
]


@pytest.mark.parametrize(("role", "op", "path"), DONE)
def test_the_table_allows_what_the_cluster_does(role, op, path):
    assert allowed(role, op, path)


@pytest.mark.parametrize(("op", "path"), FORBIDDEN)
def test_a_supervisor_cannot_write_what_nimbus_owns(op, path):
    assert not allowed(SUPERVISOR, op, path)


@pytest.mark.parametrize(("op", "path"), FORBIDDEN + WORKER_FORBIDDEN)
def test_a_worker_cannot_write_what_nimbus_or_supervisors_own(op, path):
    assert not any(allowed(login, op, path) for login in (TOPOLOGY, WORKERS, USER))


def test_a_consumer_group_is_its_makers_submitters():
    mine = make_digest_acl_credential("user-alice", "pw")
    acl = acl_for(L.consumer_offset("g", "f", "p"), ROOT, IDS, workers_id="w", user_id=mine)
    assert ACL(ALL, Id("digest", mine)) in acl and "w" not in {a.id.id for a in acl}
    assert not allowed(WORKERS, "read", L.consumer_offset("g", "f", "p"))


def test_a_topology_node_names_that_topology_alone():
    """The topology's login is named only where the path is that topology's, so another
    topology's workers (logged in as theirs) get nothing there."""
    own = make_digest_acl_credential("topology-" + TID, "pw")
    ids_of = {TID: own}.get
    for path in (L.credentials(TID), L.usercredentials(TID), L.taskbeat(TID, "s1", 1)):
        acl = acl_for(path, ROOT, IDS, topology_id=ids_of)
        assert [a.id.id for a in acl if a.id.id == own] == [own], path
    for path in (L.credentials("other-1-1"), L.errors("other-1-1") + "/x", L.supervisor("s")):
        assert own not in {a.id.id for a in acl_for(path, ROOT, IDS, topology_id=ids_of)}
    for path in (
        L.credentials_root,
        L.assignments,
        L.nimbus_epoch,
        L.consumer_offset("g", "f", "p"),
    ):
        assert own not in {a.id.id for a in acl_for(path, ROOT, IDS, topology_id=ids_of)}


def test_nimbus_reads_but_does_not_write_what_supervisors_own():
    for path in (L.supervisor("s1"), L.taskbeat(TID, "s1", 1), L.consumer_offset("g", "f", "p")):
        grant = grant_for(path, ROOT)
        assert grant.nimbus & READ and not grant.nimbus & WRITE
    # a host's registration: only that host writes it; a worker's beat: only its topology
    grant = grant_for(L.supervisor("s1"), ROOT)
    assert grant.host == ALL and grant.supervisor == READ and not grant.topology
    assert not allowed(SUPERVISOR, "set", L.supervisor("s1"))
    assert allowed(HOST, "set", L.supervisor("s1"))
    grant = grant_for(L.taskbeat(TID, "s1", 1), ROOT)
    assert grant.topology == ALL and grant.supervisor == READ and not grant.host
    assert grant_for(L.consumer_offset("g", "f", "p"), ROOT).supervisor == ALL


def test_a_host_owned_node_names_its_host_or_falls_back_to_the_role():
    host = make_digest_acl_credential("host-s1", "pw")
    acl = acl_for(L.supervisor("s1"), ROOT, IDS, host_id=host)
    assert ACL(ALL, Id("digest", host)) in acl
    assert ACL(READ, Id("digest", IDS[SUPERVISOR])) in acl
    without = acl_for(L.supervisor("s1"), ROOT, IDS)  # no host login: the role's, as before
    assert ACL(ALL, Id("digest", IDS[SUPERVISOR])) in without


def test_paths_outside_the_table_are_nimbus_owned():
    for path in ("/", "/other", "/squall/junk/deeper", "/squallish/storms"):
        assert grant_for(path, ROOT) == NIMBUS_OWNED
    # a nested root: its parents are nimbus's, and the table applies below it
    assert grant_for("/a", "/a/b") == NIMBUS_OWNED
    assert grant_for("/a/b/supervisors/s", "/a/b/") == grant_for("/squall/supervisors/s", ROOT)
    assert relative("/squall", "/squall/") == "" and relative("/squall/x/", ROOT) == "x"
    assert relative("/squal", ROOT) is None and relative("/squall2/x", ROOT) is None
    # "**" needs at least one more segment; "*" exactly one
    assert grant_for("/squall/consumers", ROOT) != grant_for("/squall/consumers/g", ROOT)
    assert grant_for("/squall/supervisors/s/x", ROOT) == NIMBUS_OWNED


def test_every_pattern_is_reachable_and_the_root_pattern_is_first():
    assert TABLE[0][0] == ""
    patterns = [p for p, _ in TABLE]
    assert len(patterns) == len(set(patterns))


IDS = {NIMBUS: "nimbus:n=", SUPERVISOR: "supervisor:s="}


def test_acl_names_each_role_with_its_permissions_and_nobody_else():
    acl = acl_for(L.taskbeats(TID), ROOT, IDS)
    assert acl == [
        ACL(ALL, Id("digest", "nimbus:n=")),
        ACL(CREATE | READ, Id("digest", "supervisor:s=")),
    ]
    admin = Id("digest", "admin:a=")
    assert acl_for(L.supervisor("s"), ROOT, IDS, admin)[-1] == ACL(ALL, admin)
    for path in (ROOT, L.assignment(TID), L.supervisor("s"), L.consumer_owner("g", "f", "p")):
        assert {a.id.scheme for a in acl_for(path, ROOT, IDS)} == {"digest"}


# --- identity files ---


def conf_for(tmp_path, **extra):
    return cluster_conf(**{"storm.local.dir": str(tmp_path / "local"), **extra})


def test_first_start_creates_private_secrets_and_public_ids_once(tmp_path):
    conf = conf_for(tmp_path)
    directory = ensure_zk_identities(conf)
    assert directory == tmp_path / "local" / "credentials"
    assert stat.S_IMODE(directory.stat().st_mode) == 0o700
    secrets = {r: (directory / secret_file(r)).read_text() for r in (NIMBUS, SUPERVISOR)}
    for role, text in secrets.items():
        assert stat.S_IMODE((directory / secret_file(role)).stat().st_mode) == 0o600
        user, _, password = text.strip().partition(":")
        assert user == role and len(password) >= 40
    assert secrets[NIMBUS] != secrets[SUPERVISOR]
    assert stat.S_IMODE((directory / IDS_FILE).stat().st_mode) == 0o644
    ids_text = (directory / IDS_FILE).read_text()
    assert "password" not in ids_text and secrets[NIMBUS].split(":")[1].strip() not in ids_text
    nimbus = load_identity(conf, NIMBUS)
    assert nimbus.ids[NIMBUS] == make_digest_acl_credential(*secrets[NIMBUS].strip().split(":"))
    assert nimbus.payload == secrets[NIMBUS].strip()
    assert nimbus.payload not in repr(nimbus)
    # a second start (another HA nimbus) keeps every file as it is
    ensure_zk_identities(conf)
    assert {r: (directory / secret_file(r)).read_text() for r in secrets} == secrets
    assert not [p for p in directory.iterdir() if p.name.startswith(".")]  # no temporaries


def test_create_once_never_overwrites(tmp_path):
    path = tmp_path / "s"
    create_once(path, "first")
    create_once(path, "second")
    assert path.read_text() == "first"


def test_no_role_identities_when_security_is_off_or_one_identity_is_configured(tmp_path):
    off = conf_for(tmp_path, security=False)
    shared = conf_for(
        tmp_path,
        **{"storm.zookeeper.auth.scheme": "digest", "storm.zookeeper.auth.payload": "u:p"},
    )
    assert role_identities(conf_for(tmp_path))
    for conf in (off, shared):
        assert not role_identities(conf)
        assert ensure_zk_identities(conf) is None
    assert not (tmp_path / "local" / "credentials").exists()


def test_a_supervisor_host_without_its_files_gets_an_error_naming_them(tmp_path, caplog):
    nimbus_host = conf_for(tmp_path / "n")
    ensure_zk_identities(nimbus_host)
    supervisor_host = conf_for(tmp_path / "s")
    with pytest.raises(ZkIdentityError, match="zookeeper-supervisor.secret is missing: copy"):
        load_identity(supervisor_host, SUPERVISOR)
    assert isinstance(ZkIdentityError("x"), ConfigError)  # the CLI prints it as one line
    source = tmp_path / "n" / "local" / "credentials"
    target = tmp_path / "s" / "local" / "credentials"
    target.mkdir(parents=True)
    (target / secret_file(SUPERVISOR)).write_text((source / secret_file(SUPERVISOR)).read_text())
    (target / secret_file(SUPERVISOR)).chmod(0o644)  # copied carelessly
    with pytest.raises(ZkIdentityError, match="zookeeper-ids.yaml is missing"):
        load_identity(supervisor_host, SUPERVISOR)
    (target / IDS_FILE).write_text((source / IDS_FILE).read_text())
    with caplog.at_level("WARNING", "squall.zk.connection"):
        supervisor = load_identity(supervisor_host, SUPERVISOR)
    assert "zookeeper-supervisor.secret is readable by other users" in caplog.text
    (target / secret_file(SUPERVISOR)).chmod(0o600)
    assert supervisor.ids == load_identity(nimbus_host, NIMBUS).ids
    with pytest.raises(ZkIdentityError, match="zookeeper-nimbus.secret is missing"):
        load_identity(supervisor_host, NIMBUS)  # that one stays on nimbus hosts
    (target / IDS_FILE).write_text("nimbus: a\nsupervisor: b\n")
    with pytest.raises(ZkIdentityError, match="does not match the supervisor secret"):
        load_identity(supervisor_host, SUPERVISOR)
    (target / IDS_FILE).write_text("[]")
    with pytest.raises(ZkIdentityError, match="a digest id for each of nimbus, supervisor"):
        load_identity(supervisor_host, SUPERVISOR)
    with pytest.raises(ZkIdentityError, match="unknown ZooKeeper role"):
        load_identity(supervisor_host, "worker")


def test_a_worker_gets_its_topologys_login_and_no_role_or_host_secret(tmp_path):
    conf = conf_for(tmp_path)
    ensure_zk_identities(conf)
    supervisor = load_identity({**conf, HOST_KEY: "host-s1:hostpw"}, SUPERVISOR)
    nimbus = load_identity(conf, NIMBUS)
    worker_conf = supervisor.worker_conf(TID)
    text = repr(worker_conf)
    for secret in (supervisor.payload.split(":")[1], nimbus.payload.split(":")[1], "hostpw"):
        assert secret not in text
    worker = load_worker_identity(worker_conf, TID)
    assert worker.topology_id(TID) == nimbus.topology_id(TID) == supervisor.topology_id(TID)
    assert worker.topology_id("other-1-1") is None  # it names no other topology
    assert nimbus.topology_id("other-1-1") not in (None, worker.topology_id(TID))
    assert worker.workers_id == nimbus.workers_id
    assert worker.user_id == worker.topology_id(TID)  # no submitter: its topology keeps groups
    alices = load_worker_identity(supervisor.worker_conf(TID, "alice"), TID)
    assert (
        alices.user_id
        == load_worker_identity(supervisor.worker_conf("t-2-2", "alice"), "t-2-2").user_id
    )
    assert alices.user_id != load_worker_identity(supervisor.worker_conf(TID, "bob"), TID).user_id
    assert worker.payload not in repr(worker)
    with pytest.raises(ZkIdentityError, match="no ZooKeeper login of other-1-1"):
        load_worker_identity(worker_conf, "other-1-1")
    with pytest.raises(ZkIdentityError, match="no ZooKeeper login"):
        load_worker_identity(conf, TID)


def test_components_get_a_conf_without_any_zookeeper_login():
    conf = {
        "topology.workers": 2,
        "security.zookeeper.topology.payload": "topology-t:x",
        "security.zookeeper.workers.payload": "workers:x",
        HOST_KEY: "host-s1:x",
        "storm.zookeeper.auth.payload": "shared:x",
    }
    assert component_conf(conf) == {"topology.workers": 2}
    assert without_zk_logins(conf) == {
        "topology.workers": 2,
        "storm.zookeeper.auth.payload": "shared:x",  # the operator's shared mode still works
    }


def test_the_worker_identity_keys_are_cluster_settings_and_redacted():
    key = "security.zookeeper.topology.payload"
    assert cluster_conf()[key] is None
    forged = review({key: "topology-x:x"}, load_defaults(), "t", True)
    assert forged.conf == {} and forged.dropped == (key,)
    assert redacted({key: "topology-x:s3cret"})[key] == REDACTED
