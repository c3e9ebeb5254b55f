"""ZooKeeper down when a daemon or a command starts: one line that names the servers and the
settings to check, and exit status 1, never a timeout's traceback."""

import subprocess
import sys

import pytest
import yaml

from squall.zk.server import free_port

pytestmark = pytest.mark.integration


@pytest.mark.parametrize("daemon", ["nimbus", "supervisor"])
def test_a_daemon_without_zookeeper_says_where_it_looked_and_what_to_check(tmp_path, daemon):
    zk_port = free_port()  # nothing listens here
    conf_file = tmp_path / "storm.yaml"
    conf_file.write_text(
        yaml.safe_dump(
            {
                "security": False,
                "storm.zookeeper.servers": ["127.0.0.1"],
                "storm.zookeeper.port": zk_port,
                "storm.zookeeper.connection.timeout": 1000,
                "storm.local.dir": str(tmp_path / "local"),
                "nimbus.thrift.port": free_port(),
                "supervisor.slots.ports": [free_port()],
            }
        )
    )
    done = subprocess.run(
        [sys.executable, "-m", "squall.cli", "--config", str(conf_file), daemon],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert done.returncode == 1, done.stderr[-2000:]
    assert f"cannot reach ZooKeeper at 127.0.0.1:{zk_port} within 1 s" in done.stderr
    assert "storm.zookeeper.servers and storm.zookeeper.port" in done.stderr
    assert "Traceback" not in done.stderr
