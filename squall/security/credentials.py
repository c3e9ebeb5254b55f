"""Every credential a new secure cluster needs, made where missing at first start (nimbus,
`squall local`, the test clusters, `squall credentials init`): the TLS CA and certificates
(squall/security/certificates.py) and the ZooKeeper role identities (squall/zk/identity.py), side by
side in security.dir. Nothing in open mode (`security: false`)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from squall.security.certificates import ensure_credentials
from squall.security.mode import security_on
from squall.ui.token import ensure_ui_token
from squall.zk.identity import ensure_zk_identities


def ensure_cluster_credentials(conf: dict[str, Any]) -> Path | None:
    """The credentials directory, complete; None in open mode."""
    if not security_on(conf):
        return None
    directory = ensure_credentials(conf)
    ensure_zk_identities(conf)  # none when storm.zookeeper.auth.* names a shared identity
    ensure_ui_token(conf)
    return directory
