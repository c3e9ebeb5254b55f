"""Who this supervisor is: its id (configured, or made once and kept in its local dir), the
credentials it must have before it starts, and the error when another live supervisor holds
the same id or the same local dir. Checked at start so a misconfigured host fails with one
clear message."""

from __future__ import annotations

import fcntl
import os
import socket
import uuid
from pathlib import Path
from typing import Any

from squall.security.certificates import SUPERVISOR, CertificateFilesError
from squall.security.tls import client_context
from squall.zk import connection as zk_mod
from squall.zk.identity import ZkIdentityError


class DuplicateSupervisorError(RuntimeError):
    """Another live supervisor is registered under the same id, or runs on the same dir."""


def hold_local_dir(local_dir: Path) -> int:
    """Lock the local dir for this process (an flock, released when the fd closes or the
    process ends, however it ends); the fd to close. A second supervisor started on the
    same dir (beside its service unit, say) killed the first one's workers as strays, and
    its Spark server, before ZooKeeper told it that its id was taken."""
    local_dir.mkdir(parents=True, exist_ok=True)
    fd = os.open(local_dir / "supervisor.lock", os.O_RDWR | os.O_CREAT, 0o600)
    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except BlockingIOError:
        os.close(fd)
        raise DuplicateSupervisorError(
            f"another supervisor is running on {local_dir} (its storm.local.dir); "
            "give each supervisor of a host its own storm.local.dir"
        ) from None
    return fd


def supervisor_id(conf: dict[str, Any], local_dir: Path) -> str:
    """The configured id, or one generated on first start and kept in the local dir."""
    if conf["supervisor.id"]:
        return conf["supervisor.id"]
    id_file = local_dir / "id"
    if id_file.exists():
        return id_file.read_text().strip()
    new_id = f"{socket.gethostname()}-{uuid.uuid4().hex[:8]}"
    local_dir.mkdir(parents=True, exist_ok=True)
    id_file.write_text(new_id)
    return new_id


def check_credentials(conf: dict[str, Any]) -> None:
    """Every file the supervisor identity needs (its certificate for nimbus, its ZooKeeper
    login), checked at start: one error that names all that are missing, not one per sync."""
    problems = []
    for check in (client_context, zk_mod.role_identity):
        try:
            check(conf, SUPERVISOR)
        except (CertificateFilesError, ZkIdentityError) as exc:
            problems.append(str(exc))
    if problems:
        raise CertificateFilesError("\n".join(problems))
