"""Each role's ZooKeeper digest identity, generated once in the credentials directory.

Secure by default: unless an operator names one shared identity (storm.zookeeper.auth.*), nimbus
and supervisors log in to ZooKeeper as different users, so that ACLs (squall.zk.acl) can let
only nimbus write assignments. The files, in squall.security.mode.credentials_dir(conf):

    zookeeper-nimbus.secret      "nimbus:<random password>", mode 0600, nimbus hosts only
    zookeeper-supervisor.secret  "supervisor:<random password>", mode 0600, every host
    zookeeper-ids.yaml           each role's digest id (user:base64(sha1)), public: a role names
                                 another in ACLs without knowing its password

Nimbus (and LocalCluster) create what is missing at start, atomically and never overwriting,
so HA nimbuses sharing a directory agree. A supervisor host gets copies of the supervisor
secret and the ids file.

Workers never get a role's or a host's login. Each topology has its own ("topology-<id>:...",
Storm's storm.zookeeper.topology.auth.payload), derived from the supervisor secret with an
HMAC, so nimbus and every supervisor (who hold that secret) know it without storing or sending
it, and nobody else can make it. A supervisor puts only its worker's topology login in the
worker conf it writes (mode 0600, its worker's user's), with its submitter's login (made the
same way: it keeps that user's consumer groups, which outlive a topology) and the workers'
shared login, which only reads the leader epoch and makes consumer groups (squall.zk.acl says
what each may do).
"""

from __future__ import annotations

import base64
import hashlib
import hmac
import logging
import os
import secrets
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

import yaml
from kazoo.security import make_digest_acl_credential

from squall.config import ConfigError
from squall.security.mode import credentials_dir, security_on
from squall.zk.acl import ROLES

log = logging.getLogger("squall.zk.connection")
IDS_FILE = "zookeeper-ids.yaml"
ZK_KEYS_PREFIX = "security.zookeeper."  # every key below is kept from a topology's components
IDS_KEY = "security.zookeeper.ids"
# A supervisor host's own login, made by the supervisor in its local dir and kept from its
# workers: the nodes a host creates (its registration) are writable by it alone, not by the
# other supervisors that share the role's login.
HOST_KEY = "security.zookeeper.host.payload"
HOST_FILE = "zookeeper-host.secret"
# What a worker logs in with, set only in the worker conf its supervisor writes
TOPOLOGY_KEY = "security.zookeeper.topology.payload"
WORKERS_KEY = "security.zookeeper.workers.payload"
USER_KEY = "security.zookeeper.user.payload"
WORKERS_USER = "workers"
SHARED_PAYLOAD_KEY = "storm.zookeeper.auth.payload"  # the operator's one shared identity


class ZkIdentityError(ConfigError):
    """A role's ZooKeeper identity is missing or unusable (names the file to fix)."""


def secret_file(role: str) -> str:
    return f"zookeeper-{role}.secret"


def _derived(supervisor_payload: str, user: str) -> str:
    """The login of `user` derived from the supervisor secret: only its holders can make it."""
    key = supervisor_payload.partition(":")[2].encode()
    mac = hmac.new(key, b"squall-zookeeper\0" + user.encode(), hashlib.sha256).digest()
    return f"{user}:{base64.urlsafe_b64encode(mac).decode().rstrip('=')}"


def topology_user(topology_id: str) -> str:
    return "topology-" + topology_id


def topology_login(supervisor_payload: str, topology_id: str) -> str:
    """A topology's own login: its workers read and write its nodes only (squall.zk.acl)."""
    return _derived(supervisor_payload, topology_user(topology_id))


def user_login(supervisor_payload: str, user: str) -> str:
    """A submitter's login, shared by its topologies: it keeps their consumer groups."""
    return _derived(supervisor_payload, "user-" + user)


def workers_login(supervisor_payload: str) -> str:
    """The login every worker shares: it reads the leader epoch and makes consumer groups."""
    return _derived(supervisor_payload, WORKERS_USER)


def without_zk_logins(conf: Mapping[str, Any]) -> dict[str, Any]:
    """`conf` less every squall ZooKeeper login (security.zookeeper.*): what a supervisor
    passes on to its workers from its own conf and the topology's."""
    return {k: v for k, v in conf.items() if not k.startswith(ZK_KEYS_PREFIX)}


def component_conf(conf: Mapping[str, Any]) -> dict[str, Any]:
    """What a topology's components are given: the worker's conf less every ZooKeeper login
    and the shared identity's password, which only the worker runtime uses."""
    return {k: v for k, v in without_zk_logins(conf).items() if k != SHARED_PAYLOAD_KEY}


@dataclass(frozen=True)
class ZkIdentity:
    """One role's login ("user:password") and every role's digest id, for ACLs. `derive_from`
    (the supervisor secret: nimbus and supervisors hold it) makes every topology's login."""

    role: str
    payload: str = field(repr=False)
    ids: Mapping[str, str]
    host: str | None = field(default=None, repr=False)  # a supervisor host's own login
    derive_from: str | None = field(default=None, repr=False)

    def worker_conf(self, topology_id: str, user: str | None = None) -> dict[str, Any]:
        """What a supervisor adds to the conf file of a worker of `topology_id` submitted by
        `user`: that topology's login, its submitter's and the workers' shared one, never
        its own nor its host's."""
        source = self._source()
        return {
            TOPOLOGY_KEY: topology_login(source, topology_id),
            WORKERS_KEY: workers_login(source),
            **({USER_KEY: user_login(source, user)} if user else {}),
            IDS_KEY: dict(self.ids),
        }

    @property
    def user_id(self) -> None:
        return None  # a daemon keeps no user's consumer groups

    @property
    def host_id(self) -> str | None:
        return digest_id(self.host) if self.host else None

    def topology_id(self, topology_id: str) -> str | None:
        return digest_id(topology_login(self._source(), topology_id))

    @property
    def workers_id(self) -> str:
        return digest_id(workers_login(self._source()))

    def _source(self) -> str:
        if self.derive_from is None:
            raise ZkIdentityError(f"the {self.role} identity cannot make topology logins")
        return self.derive_from


@dataclass(frozen=True)
class WorkerIdentity:
    """A worker's logins, from the conf its supervisor wrote: its topology's and the workers'
    shared one. It names its own topology in ACLs, no other."""

    topology: str  # the topology's id
    payload: str = field(repr=False)
    workers: str = field(repr=False)
    ids: Mapping[str, str]
    user: str | None = field(default=None, repr=False)  # its submitter's login

    def topology_id(self, topology_id: str) -> str | None:
        return digest_id(self.payload) if topology_id == self.topology else None

    @property
    def user_id(self) -> str:
        """Who keeps the consumer groups it makes: its submitter (else its topology)."""
        return digest_id(self.user or self.payload)

    @property
    def workers_id(self) -> str:
        return digest_id(self.workers)

    @property
    def host_id(self) -> None:
        return None


def load_worker_identity(conf: Mapping[str, Any], topology_id: str) -> WorkerIdentity:
    """A worker's identity from its conf file; a clear error when its supervisor set none."""
    payload, workers = str(conf.get(TOPOLOGY_KEY) or ""), str(conf.get(WORKERS_KEY) or "")
    if payload.partition(":")[0] != topology_user(topology_id):
        raise ZkIdentityError(f"the worker conf has no ZooKeeper login of {topology_id}")
    if workers.partition(":")[0] != WORKERS_USER:
        raise ZkIdentityError("the worker conf has no workers' ZooKeeper login")
    user = str(conf.get(USER_KEY) or "") or None
    if user is not None and not user.startswith("user-"):
        raise ZkIdentityError(f"{USER_KEY} is not a submitter's login")
    ids = conf.get(IDS_KEY)
    if not (isinstance(ids, dict) and all(isinstance(ids.get(r), str) for r in ROLES)):
        raise ZkIdentityError(f"{IDS_KEY}: expected a digest id for each of {', '.join(ROLES)}")
    return WorkerIdentity(topology_id, payload, workers, {r: ids[r] for r in ROLES}, user)


def role_identities(conf: Mapping[str, Any]) -> bool:
    """Per-role identities apply when security is on and no shared identity is configured."""
    return security_on(dict(conf)) and not conf.get("storm.zookeeper.auth.scheme")


def digest_id(payload: str) -> str:
    user, _, password = payload.partition(":")
    return make_digest_acl_credential(user, password)


def ensure_zk_identities(conf: Mapping[str, Any]) -> Path | None:
    """Create the roles' secrets and the ids file where missing (nimbus's start, LocalCluster).
    None when role identities do not apply (security off, or a shared identity configured)."""
    if not role_identities(conf):
        return None
    directory = credentials_dir(dict(conf))
    directory.mkdir(mode=0o700, parents=True, exist_ok=True)
    for role in ROLES:
        create_once(directory / secret_file(role), f"{role}:{secrets.token_urlsafe(32)}\n")
    ids = {role: digest_id(_read_payload(directory, role)) for role in ROLES}
    text = yaml.safe_dump(ids, sort_keys=True)
    ids_path = directory / IDS_FILE
    if not ids_path.exists() or ids_path.read_text() != text:
        write_private(ids_path, text, mode=0o644)
    return directory


def load_identity(conf: Mapping[str, Any], role: str) -> ZkIdentity:
    """`role`'s identity from the credentials directory (nimbus's with the supervisor secret,
    which makes the topologies' logins); a clear error naming the file to copy when it is not
    there."""
    if role not in ROLES:
        raise ZkIdentityError(f"unknown ZooKeeper role {role!r}")
    host = str(conf[HOST_KEY]) if conf.get(HOST_KEY) else None
    directory = credentials_dir(dict(conf))
    payload = _read_payload(directory, role)
    try:
        ids = yaml.safe_load((directory / IDS_FILE).read_text())
    except FileNotFoundError:
        raise ZkIdentityError(_missing(directory / IDS_FILE)) from None
    except (OSError, yaml.YAMLError) as exc:
        raise ZkIdentityError(f"cannot read {directory / IDS_FILE}: {exc}") from None
    identity = _checked(role, payload, ids, str(directory / IDS_FILE))
    source = payload if role == "supervisor" else _read_payload(directory, "supervisor")
    if digest_id(source) != identity.ids["supervisor"]:
        raise ZkIdentityError(f"{directory / secret_file('supervisor')} does not match {IDS_FILE}")
    return replace(identity, host=host, derive_from=source)


def ensure_host_identity(local_dir: Path, name: str) -> str:
    """This supervisor host's own login ("host-<name>:<random>"), made once in its local dir
    (mode 0600) and kept with its supervisor id: a new one could not change the nodes the
    host made before."""
    user = "host-" + "".join(c if c.isalnum() or c in "-_." else "-" for c in name)
    local_dir.mkdir(parents=True, exist_ok=True)
    create_once(local_dir / HOST_FILE, f"{user}:{secrets.token_urlsafe(32)}\n")
    return (local_dir / HOST_FILE).read_text().strip()


def _checked(role: str, payload: str, ids: Any, source: str) -> ZkIdentity:
    user, sep, password = payload.partition(":")
    if not (user and sep and password):
        raise ZkIdentityError(f"the {role} ZooKeeper secret is not 'user:password'")
    if not (isinstance(ids, dict) and all(isinstance(ids.get(r), str) for r in ROLES)):
        raise ZkIdentityError(f"{source}: expected a digest id for each of {', '.join(ROLES)}")
    if ids[role] != digest_id(payload):
        raise ZkIdentityError(
            f"{source}: the {role} id does not match the {role} secret; copy both files from "
            "the nimbus host's credentials directory again"
        )
    return ZkIdentity(role, payload, {r: ids[r] for r in ROLES})


def _read_payload(directory: Path, role: str) -> str:
    path = directory / secret_file(role)
    try:
        if path.stat().st_mode & 0o077:
            log.warning("%s is readable by other users: chmod 600 it", path)
        return path.read_text().strip()
    except FileNotFoundError:
        raise ZkIdentityError(_missing(path)) from None
    except OSError as exc:
        raise ZkIdentityError(f"cannot read {path}: {exc.strerror}") from None


def _missing(path: Path) -> str:
    return (
        f"ZooKeeper identity file {path} is missing: copy {path.name} (and {IDS_FILE}) from "
        "the credentials directory (security.dir) of the nimbus host, which creates them at "
        f"first start, into {path.parent} (secrets mode 0600); or set security: false"
    )


def create_once(path: Path, text: str) -> None:
    """Write `path` (mode 0600) unless it exists: a hard link of a finished temporary file,
    so a reader never sees half a secret and of two racing writers one wins, whole."""
    if path.exists():
        return
    tmp = path.with_name(f".{path.name}.{os.getpid()}.{secrets.token_hex(4)}")
    _write_new(tmp, text, 0o600)
    try:
        os.link(tmp, path)
    except FileExistsError:
        pass
    finally:
        tmp.unlink()


def write_private(path: Path, text: str, mode: int = 0o600) -> None:
    """Replace `path` atomically with a file of `mode` (0600: readable by this user only)."""
    replace_file(path, [text.encode()], mode)


def replace_file(path: Path, chunks: Iterable[bytes], mode: int = 0o644) -> None:
    """Write `chunks` to a part file of a new random name (O_EXCL: never opened through a
    link) and rename it over `path`. A supervisor running workers as their users writes as
    root into directories those users own: a fixed `x.part` name let a worker plant a link
    there and have root overwrite the file it pointed at."""
    tmp = path.with_name(f".{path.name}.{secrets.token_hex(8)}.part")
    fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW, mode)
    try:
        with os.fdopen(fd, "wb") as f:
            os.fchmod(f.fileno(), mode)  # the umask may have narrowed it
            for chunk in chunks:
                f.write(chunk)
            f.flush()
            os.fsync(f.fileno())
        os.replace(tmp, path)
    except BaseException:
        tmp.unlink(missing_ok=True)
        raise


def _write_new(path: Path, text: str, mode: int) -> None:
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, mode)
    with os.fdopen(fd, "w") as f:
        os.fchmod(f.fileno(), mode)  # the umask may have narrowed it
        f.write(text)
        f.flush()
        os.fsync(f.fileno())
