"""What a local cluster's daemons are configured with, and the credentials made for them before
any of them starts. Plain functions of the cluster's layout, so the conf a test cluster runs
with can be read in one place."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from squall.security.credentials import ensure_cluster_credentials
from squall.zk.ensemble import ZooKeeperEnsemble
from squall.zk.server import ZooKeeperServer


def credentials_dir(directory: Path) -> Path:
    return directory / "credentials"


def daemon_conf(
    zookeeper: ZooKeeperServer | ZooKeeperEnsemble,
    nimbus_host: str,
    nimbus_ports: list[int],
    directory: Path,
    overrides: dict[str, Any],
) -> dict[str, Any]:
    """The conf every daemon of the cluster shares, before its own (local dir, ports) is added."""
    return {
        "storm.zookeeper.servers": zookeeper.servers,
        "storm.zookeeper.port": zookeeper.port,
        "storm.zookeeper.session.timeout": 6000,
        "storm.local.hostname": nimbus_host,
        "nimbus.seeds": [f"{nimbus_host}:{p}" for p in nimbus_ports],
        "nimbus.host": nimbus_host,
        "nimbus.thrift.port": nimbus_ports[0],
        "nimbus.store.url": f"sqlite:///{directory / 'store.db'}",
        "nimbus.monitor.freq.secs": 2,
        "supervisor.monitor.frequency.secs": 1,
        "security.dir": str(credentials_dir(directory)),
        # a warm Spark Connect JVM per supervisor only where asked: a throw-away cluster
        # (squall local, most tests) would start and warm one per supervisor for nothing
        "supervisor.spark.connect.enable": False,
        **overrides,
    }


def ensure_local_credentials(directory: Path, nimbus_host: str, overrides: dict[str, Any]) -> None:
    """Make what is missing of the CA and the daemons' certificates and identities."""
    from squall.config import cluster_conf

    conf = cluster_conf(
        **{
            "storm.local.dir": str(directory),
            "nimbus.host": nimbus_host,  # in the server certificate's names
            "nimbus.seeds": [nimbus_host],
            "security.dir": str(credentials_dir(directory)),
            **overrides,
        }
    )
    ensure_cluster_credentials(conf)
