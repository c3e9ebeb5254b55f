"""Who this supervisor is: its id (configured, or made once and kept in its local dir), the
credentials it must have before it starts, and the error when another live supervisor holds
the same id. Checked at start so a misconfigured host fails with one clear message."""

from __future__ import annotations

import socket
import uuid
from pathlib import Path
from typing import Any

from squall import zk as zk_mod
from squall.certificates import SUPERVISOR, CredentialsError
from squall.tls import client_context
from squall.zk_identity import ZkIdentityError


class DuplicateSupervisorError(RuntimeError):
    """Another live supervisor is registered under the same id."""


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
        except (CredentialsError, ZkIdentityError) as exc:
            problems.append(str(exc))
    if problems:
        raise CredentialsError("\n".join(problems))
