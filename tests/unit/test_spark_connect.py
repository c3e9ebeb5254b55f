"""The supervisor's shared Spark Connect server as its workers see it: which topologies use
it, how its state is read, how a worker falls back, and what its command line holds."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from squall import spark_connect as sc
from squall.config import ConfigError, cluster_conf, load_defaults
from squall.supervisor.spark_server import LOOPBACK, server_command, server_env
from squall.worker.spark import SparkHolder, session_settings

ON = {sc.ENABLE: True, "spark.master": "local[*]"}


@pytest.mark.parametrize(
    ("conf", "shared"),
    [
        (ON, True),
        ({sc.ENABLE: True}, True),  # no spark.master at all: the default
        ({**ON, sc.ENABLE: False}, False),
        ({"spark.master": "local[*]"}, False),  # key absent: an old supervisor, no server
        ({**ON, "spark.master": "local[2]"}, False),  # a JVM of the topology's own
        ({**ON, "spark.master": "spark://10.0.0.1:7077"}, False),
        ({**ON, "spark.remote": "sc://spark:15002"}, False),
    ],
)
def test_a_topology_uses_the_shared_server_unless_it_names_its_own_spark(conf, shared):
    assert sc.uses_shared_server(conf) is shared


def test_the_state_round_trips_and_a_missing_or_torn_file_reads_as_none(tmp_path):
    assert sc.read_state(tmp_path) is None
    sc.state_file(tmp_path).write_text('{"state": "ready", "po')
    assert sc.read_state(tmp_path) is None
    state = sc.ServerState(sc.READY, 15002, 4242)
    sc.state_file(tmp_path).write_text(state.to_json())
    assert sc.read_state(tmp_path) == state


def test_the_url_names_localhost_so_pyspark_sends_the_token_over_local_credentials():
    assert sc.remote_url(15002, "s3cret") == "sc://localhost:15002/;token=s3cret"
    assert sc.remote_url(15002) == "sc://localhost:15002/"


def test_the_server_listens_on_loopback_and_its_token_is_never_on_the_command_line():
    command = server_command(Path("/spark"), 15002, "1g", "squall-sup1")
    assert f"spark.connect.grpc.binding.address={LOOPBACK}" in command
    assert "spark.connect.grpc.binding.port=15002" in command
    assert "spark.authenticate=true" in command
    assert not any("token" in part for part in command)
    env = server_env({"PATH": "/bin"}, Path("/spark"), "s3cret")
    assert env["SPARK_CONNECT_AUTHENTICATE_TOKEN"] == "s3cret"
    assert env["SPARK_LOCAL_IP"] == LOOPBACK and env["PATH"] == "/bin"


def test_a_connect_session_gets_only_the_conf_keys_not_driver_bindings():
    conf = {
        "spark.master": "local[*]",
        "spark.sql.shuffle.partitions": 2,
        "spark.driver.memory": "512m",  # the server's JVM runs already: it would only warn
    }
    assert session_settings(conf, "node1", "10.1.2.3", remote=True) == {
        "spark.sql.shuffle.partitions": "2"
    }
    assert "spark.driver.host" in session_settings(conf, "node1", "10.1.2.3", remote=False)


def _holder(tmp_path: Path, **conf) -> SparkHolder:
    full = {**ON, sc.START_TIMEOUT: 1, **conf}
    return SparkHolder(full, "t", tmp_path / "handoff", shared_dir=tmp_path / "server")


def test_a_worker_takes_the_ready_servers_url_and_its_token_apart(tmp_path, monkeypatch):
    monkeypatch.delenv(sc.TOKEN_ENV, raising=False)
    server = tmp_path / "server"
    server.mkdir()
    sc.token_file(server).write_text("s3cret\n")
    sc.state_file(server).write_text(sc.ServerState(sc.READY, 15002, 1).to_json())
    holder = _holder(tmp_path)
    assert holder._shared_url() == "sc://localhost:15002/"
    assert os.environ[sc.TOKEN_ENV] == "s3cret"  # PySpark's client reads it there
    assert holder.handoff.directory is not None  # the server on this host reads Parquet files


@pytest.mark.parametrize("state", [sc.ServerState(sc.FAILED, 1, 2, "no java"), None])
def test_a_worker_falls_back_to_its_own_spark_when_the_server_failed_or_never_came(tmp_path, state):
    server = tmp_path / "server"
    server.mkdir()
    if state is not None:
        sc.state_file(server).write_text(state.to_json())
    holder = _holder(tmp_path)
    assert holder._shared_url() is None
    assert holder.shared_dir is None and holder.shared is None


def test_the_new_keys_have_defaults_and_minimums():
    defaults = load_defaults()
    assert defaults[sc.ENABLE] is True and defaults[sc.PORT] == 0
    assert cluster_conf(**{sc.PORT: 15002})[sc.PORT] == 15002
    with pytest.raises(ConfigError):
        cluster_conf(**{sc.START_TIMEOUT: 0})
    with pytest.raises(ConfigError):
        cluster_conf(**{sc.ENABLE: "yes"})


def test_the_registration_says_off_starting_ready_or_failed_with_the_reason():
    from squall.supervisor.spark_server import readiness

    assert readiness(None) == "off"
    assert readiness(sc.ServerState(sc.STARTING, 1)) == "starting"
    assert readiness(sc.ServerState(sc.READY, 1, 2)) == "ready"
    assert readiness(sc.ServerState(sc.FAILED, 1, 2, "exited")) == "failed: exited"


def test_each_state_the_server_writes_is_told_to_the_supervisor(tmp_path):
    from squall.supervisor.spark_server import SparkConnectServer

    heard: list[sc.ServerState] = []
    server = SparkConnectServer({}, "n", tmp_path, port=1, memory="1g", on_state=heard.append)
    for state in (sc.ServerState(sc.STARTING, 1), sc.ServerState(sc.READY, 1, 2)):
        server._write(state)
    assert heard == [sc.ServerState(sc.STARTING, 1), sc.ServerState(sc.READY, 1, 2)]
    assert sc.read_state(tmp_path) == sc.ServerState(sc.READY, 1, 2)
