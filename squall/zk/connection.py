"""Connecting to ZooKeeper with the cluster conf's servers, timeouts and identity.

Three modes: secure by default, each daemon logs in with its role's digest identity
(squall.zk.identity), each worker with its topology's, and every node they create gets its
ACL from squall.zk.acl's table; with
storm.zookeeper.auth.* one identity the operator manages, shared by every daemon; with
`security: false` and no auth keys, Storm's open mode (world:anyone:ALL).
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Callable, Iterable, Sequence
from typing import Any, TypeVar

from kazoo.client import KazooClient
from kazoo.exceptions import NoAuthError, NoNodeError, UnimplementedError
from kazoo.handlers.threading import KazooTimeoutError
from kazoo.retry import KazooRetry
from kazoo.security import ACL, Id, Permissions, make_digest_acl

from squall.config import zk_hosts
from squall.records import RecordError, decode
from squall.zk.acl import acl_for
from squall.zk.acl_client import RoleAclClient
from squall.zk.identity import (
    WorkerIdentity,
    ZkIdentity,
    load_identity,
    load_worker_identity,
    role_identities,
)
from squall.zk.layout import ZkLayout
from squall.zk.multiread import get_many

R = TypeVar("R")
log = logging.getLogger("squall.zk.connection")


class ZkAuthError(ValueError):
    """The ZooKeeper auth settings cannot be used."""


class ZooKeeperUnreachable(ConnectionError):
    """No ZooKeeper server answered within storm.zookeeper.connection.timeout: one line that
    names the servers and the settings to check, instead of a timeout's traceback."""

    def __init__(self, hosts: str, seconds: float) -> None:
        super().__init__(
            f"cannot reach ZooKeeper at {hosts} within {seconds:g} s: check that it runs there, "
            "and storm.zookeeper.servers and storm.zookeeper.port in the cluster conf "
            "(--config or $SQUALL_CONF)"
        )


def auth_settings(conf: dict[str, Any]) -> tuple[list[tuple[str, str]], list[ACL] | None]:
    """kazoo's auth_data and default_acl from Storm's keys. Off (no auth, kazoo's open ACL)
    unless storm.zookeeper.auth.scheme is set. With digest auth every node this client creates
    is ALL for the identity in storm.zookeeper.auth.payload ("user:password", shared by the
    cluster's daemons) and for storm.zookeeper.superACL ("scheme:id", e.g. an admin's
    "digest:admin:<base64 sha1>"); nobody else can read or write it."""
    scheme = conf.get("storm.zookeeper.auth.scheme")
    if not scheme:
        return [], None
    payload = str(conf.get("storm.zookeeper.auth.payload") or "")
    if scheme != "digest":
        raise ZkAuthError(f"storm.zookeeper.auth.scheme {scheme!r}: only 'digest' is supported")
    user, sep, password = payload.partition(":")
    if not (user and sep and password):
        raise ZkAuthError("storm.zookeeper.auth.payload must be 'user:password' for digest auth")
    acl = [make_digest_acl(user, password, all=True)]
    super_id = super_acl_id(conf)
    if super_id is not None:
        acl.append(ACL(Permissions.ALL, super_id))
    return [(scheme, payload)], acl


def super_acl_id(conf: dict[str, Any]) -> Id | None:
    """storm.zookeeper.superACL ("scheme:id"): an admin identity given ALL on every node."""
    super_acl = conf.get("storm.zookeeper.superACL")
    if not super_acl:
        return None
    super_scheme, sep, super_id = str(super_acl).partition(":")
    if not (super_scheme and sep and super_id):
        raise ZkAuthError("storm.zookeeper.superACL must be 'scheme:id'")
    return Id(super_scheme, super_id)


def role_identity(conf: dict[str, Any], role: str) -> ZkIdentity | None:
    """`role`'s identity when the cluster uses per-role identities, else None."""
    return load_identity(conf, role) if role_identities(conf) else None


def worker_auth_conf(conf: dict[str, Any]) -> Callable[[str, str | None], dict[str, Any]]:
    """What a supervisor puts in the conf of a worker of a topology (its id, its submitter)
    so that it logs in as that topology: nothing where the cluster has no per-role
    identities."""
    identity = role_identity(conf, "supervisor")
    return identity.worker_conf if identity else lambda _tid, _user: {}


WORKER = "worker"  # connect's role for a worker: its topology's login, from its conf file


def connect(conf: dict[str, Any], role: str, topology_id: str | None = None) -> KazooClient:
    """A started client logged in as `role` ("nimbus" or "supervisor", squall.zk.acl; WORKER
    with `topology_id`: as that topology) when the cluster uses per-role identities;
    otherwise as storm.zookeeper.auth.* says."""
    options: dict[str, Any] = {
        "hosts": zk_hosts(conf),
        "timeout": conf["storm.zookeeper.session.timeout"] / 1000,
        "connection_retry": KazooRetry(max_tries=-1, max_delay=5),
        "command_retry": KazooRetry(max_tries=5, max_delay=2),
        "logger": logging.getLogger("squall.kazoo"),
    }
    identity = _identity(conf, role, topology_id)
    if identity is None:
        auth_data, default_acl = auth_settings(conf)
        client = KazooClient(auth_data=auth_data or None, default_acl=default_acl, **options)
    else:
        root, ids, super_id = conf["storm.zookeeper.root"], identity.ids, super_acl_id(conf)
        host, workers, user = identity.host_id, identity.workers_id, identity.user_id
        per_topology = identity.topology_id
        client = RoleAclClient(
            lambda path: acl_for(path, root, ids, super_id, host, per_topology, workers, user),
            auth_data=_logins(identity),
            **options,
        )
    seconds = conf["storm.zookeeper.connection.timeout"] / 1000
    try:
        client.start(timeout=seconds)
    except KazooTimeoutError:
        client.stop()  # its connection thread would otherwise keep retrying
        client.close()
        unreachable = ZooKeeperUnreachable(options["hosts"], seconds)
        log.error("%s", unreachable)
        raise unreachable from None
    return client


def _identity(
    conf: dict[str, Any], role: str, topology_id: str | None
) -> ZkIdentity | WorkerIdentity | None:
    if not role_identities(conf):
        return None
    if role == WORKER:
        if topology_id is None:
            raise ZkAuthError("a worker's ZooKeeper login needs its topology's id")
        return load_worker_identity(conf, topology_id)
    return load_identity(conf, role)


def _logins(identity: ZkIdentity | WorkerIdentity) -> list[tuple[str, str]]:
    if isinstance(identity, WorkerIdentity):
        user = [("digest", identity.user)] if identity.user else []
        return [("digest", identity.payload), ("digest", identity.workers), *user]
    return [("digest", identity.payload), *([("digest", identity.host)] if identity.host else [])]


def await_paths(zk: KazooClient, paths: list[str], stopping: threading.Event) -> bool:
    """Create `paths`, or, where this role may not (a supervisor under a secure root), wait
    until nimbus has: a supervisor may start first. False if `stopping` is set meanwhile."""
    for path in paths:
        try:
            zk.ensure_path(path)
            continue
        except NoAuthError:
            log.info("waiting for nimbus to create %s", path)
        while zk.exists(path) is None:
            if stopping.wait(0.5):
                return False
    return True


def layout(conf: dict[str, Any]) -> ZkLayout:
    return ZkLayout(conf["storm.zookeeper.root"])


def children(zk: KazooClient, path: str) -> list[str]:
    try:
        return sorted(zk.get_children(path))
    except NoNodeError:
        return []


def read_record(zk: KazooClient, cls: type[R], path: str) -> R | None:
    try:
        data, _ = zk.get(path)
    except NoNodeError:
        return None
    return decode(cls, data, path)


def read_records(zk: KazooClient, cls: type[R], parent: str) -> dict[str, R]:
    """Every child of `parent` decoded as `cls`; a foreign or corrupt node is skipped, and
    one removed meanwhile. Every read is sent before any answer is awaited: one round trip
    for all children, not one each, which made nimbus's monitor round (every worker's beat)
    and each supervisor's sync (every assignment) grow with the round-trip time times the
    node count (bench/controlplane.py)."""
    return read_named(zk, cls, parent, children(zk, parent))


def read_named(zk: KazooClient, cls: type[R], parent: str, names: Iterable[str]) -> dict[str, R]:
    """The children `names` of `parent` decoded as `cls`, all read in one round trip (with
    multiRead, squall.zk.multiread: a request per hundred nodes, not one each); one missing
    or unreadable is left out."""
    return read_named_or_why(zk, cls, parent, names)[0]


def read_named_or_why(
    zk: KazooClient, cls: type[R], parent: str, names: Iterable[str]
) -> tuple[dict[str, R], dict[str, str]]:
    """`read_named`, and why each node that is there could not be read: a reader that must
    tell a node gone from one it cannot read (the supervisor keeps acting on the last
    assignment it read rather than stopping the workers of one it cannot)."""
    names = sorted(names)
    out, unreadable = {}, {}
    for child, answer in zip(names, _get_all(zk, [f"{parent}/{c}" for c in names]), strict=True):
        if isinstance(answer, NoNodeError):
            continue
        if isinstance(answer, Exception):
            raise answer
        try:
            out[child] = decode(cls, answer[0], f"{parent}/{child}")
        except RecordError as exc:
            log.warning("skipping a node this version cannot read: %s", exc)
            unreadable[child] = str(exc)
    return out, unreadable


def read_task_components(zk: KazooClient, parents: Sequence[str]) -> list[dict[int, str]]:
    """Task -> component from each /tasks/[id] in `parents`: every list asked for at once,
    then every node in one multiRead, so a new leader reading all its topologies' tasks pays
    two round trips, not two each. A child that is not a task number or whose data is not a
    name is skipped (and logged), one missing too: never fatal to a worker's start or to
    nimbus taking the lead. Any other error (no access) is raised."""
    asked = [zk.get_children_async(parent) for parent in parents]
    names = []
    for answer in asked:
        try:
            names.append(sorted(answer.get()))
        except NoNodeError:
            names.append([])
    paths = [f"{p}/{c}" for p, children in zip(parents, names, strict=True) for c in children]
    answers = iter(_get_all(zk, paths))
    out = []
    for parent, children in zip(parents, names, strict=True):
        tasks = {}
        for child in children:
            answer = next(answers)
            if isinstance(answer, NoNodeError):
                continue
            if isinstance(answer, Exception):
                raise answer
            name = _name(answer[0])
            if child.isdigit() and name:
                tasks[int(child)] = name
            else:
                log.warning("skipping the malformed task node %s/%s", parent, child)
        out.append(tasks)
    return out


def _name(data: bytes | None) -> str:
    try:
        return (data or b"").decode()
    except UnicodeDecodeError:
        return ""


def _get_all(zk: KazooClient, paths: list[str]) -> list[Any]:
    """(data, stat) or the node's error for each path; a server without multiRead (before
    ZooKeeper 3.6) gets every read sent before any answer is awaited instead."""
    try:
        return [answer for chunk in get_many(zk, paths) for answer in chunk]
    except UnimplementedError:
        pending = [zk.get_async(path) for path in paths]
    answers: list[Any] = []
    for answer in pending:
        try:
            answers.append(answer.get())
        except NoNodeError as exc:
            answers.append(exc)
    return answers


def read_epoch(zk: KazooClient, lay: ZkLayout) -> int | None:
    """The current leader epoch (/nimbus/epoch), or None when it is missing or not a
    non-negative integer (then nothing can be checked against it)."""
    try:
        data, _ = zk.get(lay.nimbus_epoch)
    except NoNodeError:
        return None
    text = (data or b"0").decode("ascii", "replace").strip()
    if not text.isdigit() or len(text) > 18:
        log.warning("%s holds %r, not an epoch", lay.nimbus_epoch, text[:40])
        return None
    return int(text)
