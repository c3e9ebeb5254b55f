"""`squall spark ...` refuses what cannot work before it starts a JVM, in one line: a worker
without the master's secret file or with one others can read, a master URL that is not one,
and a connect-server without the Spark host's certificate."""

import pytest
from click.testing import CliRunner

from squall.cli import main
from squall.spark_standalone import ensure_auth_file


@pytest.fixture
def conf(tmp_path):
    path = tmp_path / "squall.yaml"
    path.write_text(f"storm.local.dir: {tmp_path / 'local'}\nsecurity.dir: {tmp_path / 'sec'}\n")
    return path


def run(conf, *args):
    result = CliRunner().invoke(main, ["--config", str(conf), "spark", *args])
    return result.exit_code, " ".join(result.output.split())


def test_a_worker_without_the_secret_file_says_where_it_comes_from(conf, tmp_path):
    code, out = run(conf, "worker", "spark://10.0.0.5:7077", "--host", "127.0.0.1")
    assert code == 1
    assert f"{tmp_path / 'sec' / 'spark-auth.properties'} is missing: copy the file" in out


def test_a_worker_refuses_a_secret_file_others_can_read(conf, tmp_path):
    secret = tmp_path / "auth.properties"
    ensure_auth_file(secret)
    secret.chmod(0o644)
    args = ("worker", "spark://10.0.0.5:7077", "--host", "127.0.0.1", "--secret-file", str(secret))
    code, out = run(conf, *args)
    assert code == 1 and "make it readable by its owner only" in out


def test_a_worker_refuses_a_master_that_is_no_url(conf, tmp_path):
    secret = tmp_path / "auth.properties"
    ensure_auth_file(secret)
    code, out = run(conf, "worker", "10.0.0.5:7077", "--host", "h", "--secret-file", str(secret))
    assert code == 1 and "is not a master URL such as spark://host:7077" in out


def test_connect_server_without_its_certificate_names_the_files(conf, tmp_path):
    code, out = run(conf, "connect-server", "--host", "127.0.0.1", "--port", "0")
    assert code == 1
    assert f"{tmp_path / 'sec' / 'spark-connect.pem'}" in out and "docs/spark.md" in out
    assert not (tmp_path / "local" / "spark-connect-server").exists()  # no JVM was started
