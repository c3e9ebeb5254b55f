"""A topology's user credentials (Storm's uploadNewCredentials), as plain data.

They live at /usercredentials/<topology-id>, apart from /credentials/<topology-id>, which
holds the topology's CURVE keypair (squall.security.topology_keys): a user upload can never replace
or reveal those keys. As in Storm, an upload is merged into what is stored (a key sent again
replaces its value; keys not sent stay), and credentials made out for another owner than the
topology's are refused. Nothing serves them back over Thrift; the topology's workers read
the node and hand the map to every component with a `set_credentials` method.
"""

from __future__ import annotations

import json
from collections.abc import Mapping

MAX_BYTES = 512 * 1024  # well inside ZooKeeper's 1 MiB node limit


class CredentialsError(ValueError):
    """Credentials nimbus refuses (too big, not strings), or a stored node that is not any."""


def owner_problem(claimed: str | None, owner: str) -> str | None:
    """Storm refuses credentials whose topoOwner is not the topology's submitter."""
    if claimed is not None and claimed != owner:
        return (
            f"uploadNewCredentials: credentials are for {claimed!r}, "
            f"the topology's owner is {owner!r}"
        )
    return None


def merged(stored: Mapping[str, str], upload: Mapping[str, str] | None) -> dict[str, str]:
    """What is stored after `upload`: Storm merges, so nothing uploaded earlier is lost."""
    if upload is not None and not all(
        isinstance(k, str) and isinstance(v, str) for k, v in upload.items()
    ):
        raise CredentialsError("uploadNewCredentials: credentials map strings to strings")
    out = {**stored, **(upload or {})}
    if len(encode(out, "")) > MAX_BYTES:
        raise CredentialsError(f"uploadNewCredentials: credentials exceed {MAX_BYTES} bytes")
    return out


def encode(creds: Mapping[str, str], owner: str) -> bytes:
    return json.dumps({"owner": owner, "creds": dict(sorted(creds.items()))}).encode()


def decode(data: bytes | None, where: str) -> dict[str, str]:
    """The stored map (empty for no node); CredentialsError for a node that is not one."""
    if not data:
        return {}
    try:
        creds = json.loads(data)["creds"]
    except (ValueError, TypeError, KeyError) as exc:
        raise CredentialsError(f"{where}: not a credentials record ({exc})") from exc
    if not isinstance(creds, dict) or not all(isinstance(v, str) for v in creds.values()):
        raise CredentialsError(f"{where}: credentials are not a map of strings")
    return {str(k): v for k, v in creds.items()}
