"""Whether a cluster runs secure (the default) or in Storm's open mode, and where its
credentials live.

Secure means: nimbus's Thrift port speaks TLS and every client presents a certificate that
names its identity (nimbus's authorizer decides what each identity may do); every daemon
authenticates to ZooKeeper with its role's digest identity and every node carries ACLs; worker
ports speak ZeroMQ CURVE with per-topology keys. `security: false` is Storm's open mode:
plain Thrift, anyone may do anything, ZooKeeper auth only if storm.zookeeper.auth.* says so.

One directory holds a cluster's credentials (`security.dir`, default
<storm.local.dir>/credentials). Nimbus, `squall local` and the test clusters create what is
missing at first start; supervisors and clients on other hosts get copies of the files their
identity needs (SECURITY.md says which).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any


def security_on(conf: dict[str, Any]) -> bool:
    return bool(conf.get("security", True))


def credentials_dir(conf: dict[str, Any]) -> Path:
    configured = conf.get("security.dir") or ""
    return Path(configured) if configured else Path(conf["storm.local.dir"]) / "credentials"
