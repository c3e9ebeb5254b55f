"""A new secure cluster's credentials are made in one go (TLS and ZooKeeper identities, as
`squall credentials init` and nimbus's first start make them); none in open mode."""

from squall.config import cluster_conf
from squall.security.credentials import ensure_cluster_credentials


def test_one_call_makes_the_certificates_and_the_zookeeper_identities(tmp_path):
    conf = cluster_conf(**{"storm.local.dir": str(tmp_path)})
    directory = ensure_cluster_credentials(conf)
    made = {p.name for p in directory.iterdir()}
    assert {"ca.pem", "nimbus.pem", "admin.pem", "supervisor.pem"} <= made
    assert {"zookeeper-nimbus.secret", "zookeeper-supervisor.secret", "zookeeper-ids.yaml"} <= made
    before = {p.name: p.read_bytes() for p in directory.iterdir()}
    assert ensure_cluster_credentials(conf) == directory  # a second start changes nothing
    assert {p.name: p.read_bytes() for p in directory.iterdir()} == before


def test_open_mode_makes_nothing(tmp_path):
    conf = cluster_conf(**{"storm.local.dir": str(tmp_path), "security": False})
    assert ensure_cluster_credentials(conf) is None
    assert not any(tmp_path.iterdir())
