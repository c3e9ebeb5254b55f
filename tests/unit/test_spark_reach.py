"""What a worker checks before it asks PySpark for a session (worker/spark_reach.py), and the
standalone helpers' command lines and secret file (squall/spark_standalone.py)."""

import socket
import stat
import threading
from pathlib import Path

import pytest

from squall import spark_standalone as ss
from squall.worker.spark import submit_args
from squall.worker.spark_reach import Endpoint, connect_endpoint, master_endpoints, unreachable


def closed_port() -> int:
    with socket.create_server(("127.0.0.1", 0)) as s:
        return s.getsockname()[1]


def test_a_connect_url_is_tls_for_a_token_to_a_host_other_than_localhost(monkeypatch):
    monkeypatch.delenv("SPARK_CONNECT_AUTHENTICATE_TOKEN", raising=False)
    assert connect_endpoint("sc://spark.example:15002/;token=x") == Endpoint(
        "spark.example", 15002, "spark.remote", True
    )
    assert not connect_endpoint("sc://localhost:15002/;token=x").tls
    assert not connect_endpoint("sc://spark.example:15002").tls
    assert connect_endpoint("sc://spark.example/;use_ssl=true").port == 15002


def test_master_urls():
    assert master_endpoints("local[*]") == []
    assert master_endpoints("spark://a:7077,b") == [
        Endpoint("a", 7077, "spark.master"),
        Endpoint("b", 7077, "spark.master"),
    ]


def test_a_local_spark_needs_no_check():
    assert unreachable({"spark.master": "local[2]"}, 1) is None


def test_a_master_that_refuses_is_said_so():
    port = closed_port()
    cause = unreachable({"spark.master": f"spark://127.0.0.1:{port}"}, 2)
    assert cause == f"cannot reach Spark at 127.0.0.1:{port} (spark.master): connection refused"


def test_one_master_of_a_list_answering_is_enough():
    with socket.create_server(("127.0.0.1", 0)) as s:
        up = s.getsockname()[1]
        master = f"spark://127.0.0.1:{closed_port()},127.0.0.1:{up}"
        assert unreachable({"spark.master": master}, 2) is None


def test_a_plain_grpc_server_named_with_a_token_is_explained(monkeypatch):
    monkeypatch.delenv("SPARK_CONNECT_AUTHENTICATE_TOKEN", raising=False)
    with socket.create_server(("127.0.0.1", 0)) as plain:

        def answer() -> None:
            conn, _ = plain.accept()
            with conn:
                conn.recv(4096)
                conn.sendall(b"\x00\x00\x12\x04\x00\x00\x00\x00\x00" + b"\x00" * 18)

        thread = threading.Thread(target=answer, daemon=True)
        thread.start()
        # 127.0.0.1 is not `localhost` to PySpark: with a token it speaks TLS
        url = f"sc://127.0.0.1:{plain.getsockname()[1]}/;token=abc"
        cause = unreachable({"spark.remote": url}, 5)
        thread.join(10)
    assert cause is not None and "it speaks plain gRPC, but PySpark uses TLS" in cause
    assert "abc" not in cause


def test_the_driver_gets_the_secret_file_as_a_properties_file():
    assert (
        submit_args(None, "/s/a b.properties")
        == "--properties-file '/s/a b.properties' pyspark-shell"
    )
    assert submit_args("--jars x.jar pyspark-shell", "/s/f").endswith("--jars x.jar pyspark-shell")


def test_the_secret_file_is_made_once_and_private(tmp_path):
    path = tmp_path / "security" / ss.AUTH_FILE
    assert ss.ensure_auth_file(path)
    first = path.read_text()
    assert not ss.ensure_auth_file(path) and path.read_text() == first
    assert stat.S_IMODE(path.stat().st_mode) == 0o600
    lines = dict(line.split(" ", 1) for line in first.splitlines() if not line.startswith("#"))
    assert lines["spark.authenticate"] == "true" and len(lines["spark.authenticate.secret"]) > 30
    assert ss.require_auth_file(path) == path
    path.chmod(0o644)
    with pytest.raises(ss.SparkSetupError, match="readable by its owner only"):
        ss.require_auth_file(path)
    with pytest.raises(ss.SparkSetupError, match="is missing: copy the file"):
        ss.require_auth_file(tmp_path / "nope")


def test_daemon_command_lines_carry_the_file_not_the_secret(tmp_path):
    home, auth = Path("/spark"), tmp_path / "auth"
    master = ss.master_command(home, "10.0.0.5", 7077, 8080, auth)
    assert master[:2] == ["/spark/bin/spark-class", ss.MASTER_CLASS]
    assert master[-2:] == ["--properties-file", str(auth)]
    worker = ss.worker_command(home, "spark://10.0.0.5:7077", "10.0.0.6", 8081, 2, "1g", None, auth)
    assert worker[2:5] == ["spark://10.0.0.5:7077", "--host", "10.0.0.6"]
    assert worker[7:9] == ["--cores", "2"]
    with pytest.raises(ss.SparkSetupError, match="not a master URL"):
        ss.worker_command(home, "10.0.0.5:7077", "h", 1, None, None, None, auth)
