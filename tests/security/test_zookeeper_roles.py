"""ZooKeeper per-role identities and ACLs (#11 item 2), probed on a live local cluster in its
default (secure) mode with plain kazoo clients: anonymous, logged in as the supervisor role,
logged in as nimbus.

Before: every node under /squall was world:anyone:ALL; one anonymous write of an assignment
moved a worker, and a supervisor registered by hand was given tasks and their live tuples."""

from __future__ import annotations

import stat
import subprocess
import sys
from pathlib import Path

import pytest
import yaml
from kazoo.exceptions import NoAuthError
from kazoo.security import OPEN_ACL_UNSAFE

from squall.local import LocalCluster, wait_for
from squall.zk.identity import IDS_FILE, TOPOLOGY_KEY, load_identity, secret_file

TINY = Path(__file__).parents[1] / "integration" / "topologies" / "tiny.py"
ROOT = "/squall"


@pytest.fixture(scope="module")
def cluster(tmp_path_factory):
    with LocalCluster(tmp_path_factory.mktemp("zkroles"), supervisors=1) as c:
        yield c


@pytest.fixture(scope="module")
def tid(cluster):
    """The tiny topology, running (every executor reported by a worker's beat)."""
    from squall.submit import submit_file

    with cluster.client() as client:
        submit_file(client, TINY, cluster.client_conf(), name="roles")
        tid = {t.name: t.id for t in client.getClusterInfo().topologies}["roles"]
        wait_for(
            lambda: all(e.stats is not None for e in client.getTopologyInfo("roles").executors),
            90,
            "every task of roles running",
        )
    return tid


@pytest.fixture
def as_role(cluster):
    """Clients of the cluster's ZooKeeper logged in as the given roles, stopped afterwards."""
    clients = []

    def make(*roles: str):
        clients.append(cluster.zk_client(*roles))
        return clients[-1]

    yield make
    for client in clients:
        client.stop()
        client.close()


def refused(*attempts) -> None:
    for attempt in attempts:
        with pytest.raises(NoAuthError):
            attempt()


def test_an_anonymous_client_can_neither_read_nor_write(cluster, tid, as_role):
    anonymous = as_role()
    assignment = f"{ROOT}/assignments/{tid}"
    refused(
        lambda: anonymous.get(assignment),
        lambda: anonymous.get_children(f"{ROOT}/assignments"),
        lambda: anonymous.set(assignment, b"{}"),
        lambda: anonymous.create(f"{ROOT}/assignments/forged-1-1", b"{}"),
        lambda: anonymous.create(f"{ROOT}/supervisors/fake", b"{}", ephemeral=True),
        lambda: anonymous.create(f"{ROOT}/nimbuses/x", b"[]"),
        lambda: anonymous.get(f"{ROOT}/storms/{tid}"),
        lambda: anonymous.set(f"{ROOT}/nimbus/epoch", b"1000000"),
        lambda: anonymous.get_children(f"{ROOT}/taskbeats/{tid}"),
    )


def test_the_supervisor_identity_reads_assignments_but_writes_only_its_own_nodes(
    cluster, tid, as_role
):
    supervisor = as_role("supervisor")
    assignment = f"{ROOT}/assignments/{tid}"
    data, _ = supervisor.get(assignment)
    assert supervisor.get(f"{ROOT}/storms/{tid}")[0]
    refused(
        lambda: supervisor.set(assignment, data),
        lambda: supervisor.create(f"{ROOT}/assignments/forged-1-1", data),
        lambda: supervisor.delete(assignment),
        lambda: supervisor.set(f"{ROOT}/storms/{tid}", b"{}"),
        lambda: supervisor.create(f"{ROOT}/storms/forged-1-1", b"{}"),
        lambda: supervisor.set(f"{ROOT}/nimbus/epoch", b"1000000"),
        lambda: supervisor.create(f"{ROOT}/nimbuses/x", b"[]"),
        lambda: supervisor.create(f"{ROOT}/nimbus/leader/x__lock__", b"", sequence=True),
        lambda: supervisor.create(f"{ROOT}/tasks/{tid}/999", b"sink"),
        lambda: supervisor.delete(f"{ROOT}/supervisors/supervisor1"),
    )
    # a host's registration is readable by every supervisor but writable only by the host
    # that made it, logged in as itself too; its workers' heartbeats only by their topology
    beats = supervisor.get_children(f"{ROOT}/taskbeats/{tid}")
    assert beats and all(b.startswith("supervisor1-") for b in beats)
    beat = f"{ROOT}/taskbeats/{tid}/{beats[0]}"
    registration = f"{ROOT}/supervisors/supervisor1"
    refused(
        lambda: supervisor.set(beat, supervisor.get(beat)[0]),
        lambda: supervisor.set(registration, supervisor.get(registration)[0]),
    )
    host_secret = cluster.directory / "supervisor1" / "supervisor" / "zookeeper-host.secret"
    assert host_secret.stat().st_mode & 0o777 == 0o600
    host1 = as_role("supervisor")
    host1.add_auth("digest", host_secret.read_text().strip())
    host1.set(registration, host1.get(registration)[0])
    refused(lambda: host1.set(beat, host1.get(beat)[0]))
    topology = as_role()
    topology.add_auth("digest", topology_login(cluster, tid))
    topology.set(beat, topology.get(beat)[0])


def topology_login(cluster, tid: str) -> str:
    """The login a supervisor hands the workers of `tid` (derived from its secret)."""
    supervisor = load_identity(cluster.client_conf(), "supervisor")
    return supervisor.worker_conf(tid)[TOPOLOGY_KEY]


def test_the_nimbus_identity_may_write_assignments(cluster, tid, as_role):
    nimbus = as_role("nimbus")
    assignment = f"{ROOT}/assignments/{tid}"
    data, stat_ = nimbus.get(assignment)
    assert nimbus.set(assignment, data, version=stat_.version).version == stat_.version + 1
    nimbus.create(f"{ROOT}/storms/probe", b"", ephemeral=True)
    nimbus.delete(f"{ROOT}/storms/probe")
    refused(lambda: nimbus.set(f"{ROOT}/supervisors/supervisor1", b'{"host": "evil"}'))
    # every node of the topology carries role ACLs, none open to the world
    for path in (ROOT, assignment, f"{ROOT}/supervisors/supervisor1", f"{ROOT}/nimbus/epoch"):
        assert {a.id.scheme for a in nimbus.get_acls(path)[0]} == {"digest"}, path


def test_every_create_takes_its_own_acl_from_the_table(cluster, tid, as_role):
    """makepath's parents each get their own ACL (not the child's), and so do transactions."""
    from squall.zk import connection as zk_mod
    from squall.zk.acl import grant_for

    def grants(zk, path):
        return {a.id.id.split(":")[0]: a.perms for a in zk.get_acls(path)[0]}

    def expected(path):
        grant = grant_for(path, ROOT)
        roles = {r: grant.of(r) for r in ("nimbus", "supervisor") if grant.of(r)}
        return {**roles, **({"workers": grant.workers} if grant.workers else {})}

    reader = as_role("nimbus")
    supervisor = zk_mod.connect(cluster.client_conf(), "supervisor")
    nimbus = zk_mod.connect(cluster.client_conf(), "nimbus")
    try:
        owner = f"{ROOT}/consumers/probe/owners/src/p0"
        supervisor.create(owner, b"1", ephemeral=True, makepath=True)
        for path in (owner, f"{ROOT}/consumers/probe", f"{ROOT}/consumers"):
            assert grants(reader, path) == expected(path), path
        assert grants(reader, owner) == {"nimbus": 1, "supervisor": 31}  # no user: a daemon's
        txn = nimbus.transaction()
        txn.create(f"{ROOT}/tasks/probe-1-1", b"")
        txn.create(f"{ROOT}/tasks/probe-1-1/1", b"c")
        assert not [r for r in txn.commit() if isinstance(r, Exception)]
        assert grants(reader, f"{ROOT}/tasks/probe-1-1/1") == {
            "nimbus": 31,
            "supervisor": 1,
            "topology-probe-1-1": 1,  # that topology's workers read it
        }
        nimbus.delete(f"{ROOT}/tasks/probe-1-1", recursive=True)
        supervisor.delete(f"{ROOT}/consumers/probe/owners", recursive=True)
        nimbus.delete(f"{ROOT}/consumers/probe")  # a group's directory: only nimbus removes it
    finally:
        for client in (supervisor, nimbus):
            client.stop()
            client.close()


def test_a_supervisor_started_before_nimbus_waits_for_the_layout(cluster):
    import threading

    from squall.zk import connection as zk_mod
    from squall.zk.layout import ZkLayout

    conf = {**cluster.client_conf(), "storm.zookeeper.root": "/late"}
    lay = ZkLayout("/late")
    supervisor, nimbus = zk_mod.connect(conf, "supervisor"), zk_mod.connect(conf, "nimbus")
    stopping, result = threading.Event(), []
    waiter = threading.Thread(
        target=lambda: result.append(
            zk_mod.await_paths(supervisor, [lay.assignments, lay.supervisors], stopping)
        )
    )
    try:
        waiter.start()
        wait_for(lambda: nimbus.exists("/late"), 10, "the supervisor to create the root")
        assert waiter.is_alive() and not nimbus.exists(lay.assignments)  # may not: it waits
        nimbus.ensure_path(lay.assignments)
        nimbus.ensure_path(lay.supervisors)
        waiter.join(10)
        assert result == [True]
        nimbus.delete(lay.supervisors)  # and a stop ends the wait
        stopping.set()
        assert zk_mod.await_paths(supervisor, [lay.supervisors], stopping) is False
    finally:
        stopping.set()
        waiter.join(10)
        nimbus.delete("/late", recursive=True)
        for client in (supervisor, nimbus):
            client.stop()
            client.close()


def test_credentials_files_and_the_worker_conf_keep_the_secrets_private(cluster, tid):
    directory = cluster.directory / "credentials"
    for role in ("nimbus", "supervisor"):
        assert stat.S_IMODE((directory / secret_file(role)).stat().st_mode) == 0o600
    assert set(yaml.safe_load((directory / IDS_FILE).read_text())) == {"nimbus", "supervisor"}
    password = (directory / secret_file("supervisor")).read_text().strip()
    host_secret = cluster.directory / "supervisor1" / "supervisor" / "zookeeper-host.secret"
    confs = list(cluster.directory.glob(f"supervisor1/supervisor/stormdist/{tid}/worker-*.json"))
    assert confs
    for conf in confs:  # the worker's own topology login only: no role's, no host's
        assert stat.S_IMODE(conf.stat().st_mode) == 0o600
        text = conf.read_text()
        assert topology_login(cluster, tid) in text
        assert password.split(":")[1] not in text
        assert host_secret.read_text().strip().split(":")[1] not in text
    pids = [int(p.read_text()) for p in cluster.directory.glob("supervisor1/**/workers/*.pid")]
    assert pids
    for pid in pids:
        command_line = Path(f"/proc/{pid}/cmdline").read_bytes().decode()
        assert password.split(":")[1] not in command_line
    with cluster.client() as client:
        assert password not in client.getNimbusConf()


def test_a_supervisor_without_its_identity_file_says_which_file_to_copy(cluster, tmp_path):
    conf = {
        **cluster.base_conf(),
        "storm.local.dir": str(tmp_path / "local"),
        "security.dir": str(tmp_path / "credentials"),
        "supervisor.id": "stranger",
    }
    conf_file = tmp_path / "supervisor.yaml"
    conf_file.write_text(yaml.safe_dump(conf))
    result = subprocess.run(
        [sys.executable, "-m", "squall.cli", "--config", str(conf_file), "supervisor"],
        capture_output=True,
        text=True,
        timeout=120,
    )
    output = "".join((result.stdout + result.stderr).split())  # rich wraps long lines
    assert result.returncode == 1, output
    assert "zookeeper-supervisor.secretismissing:copy" in output
    assert "Traceback" not in output


def test_security_off_keeps_zookeeper_open_and_turning_it_on_secures_what_was_open(tmp_path):
    paths = (ROOT, f"{ROOT}/assignments", f"{ROOT}/nimbus/epoch", f"{ROOT}/supervisors/supervisor1")
    with LocalCluster(tmp_path / "open", supervisors=1, conf={"security": False}) as cluster:
        anonymous = cluster.zk_client()
        try:
            for path in paths:
                assert anonymous.get_acls(path)[0] == OPEN_ACL_UNSAFE, path
            assert not (tmp_path / "open" / "credentials").exists()
            # the operator turns security on: nimbus's next start gives the open nodes their
            # role ACLs (the supervisor, still open, is left running: its node is fixed too)
            cluster.conf["security"] = True
            cluster.restart_nimbus(1)
            refused(*(lambda p=p: anonymous.get(p) for p in paths))
            refused(lambda: anonymous.set(f"{ROOT}/assignments", b"x"))
            nimbus = cluster.zk_client("nimbus")
            try:
                acl = nimbus.get_acls(f"{ROOT}/supervisors/supervisor1")[0]
                assert {(a.id.id.split(":")[0], a.perms) for a in acl} == {
                    ("nimbus", 1),
                    ("supervisor", 31),
                }
            finally:
                nimbus.stop()
                nimbus.close()
        finally:
            anonymous.stop()
            anonymous.close()
