"""A Spark standalone cluster from pip's pyspark, which ships bin/spark-class but none of
Spark's sbin/ scripts: the command lines of its Master and Worker daemons, and their shared
secret (`squall spark master|worker`, docs/spark.md).

Spark's own RPC authentication (`spark.authenticate`) needs one secret shared by the master,
its workers, their executors and every driver (a SparkBolt's worker). It lives in a Spark
properties file, mode 0600, that each daemon and driver is given as `--properties-file`: the
secret is on no command line (`ps` shows those), in no environment a log prints, and in no
squall conf (topology.spark.auth.file names the file, not the secret). The same file turns
off the master web UI's kill links and its REST submission server, which authenticate no one.
"""

from __future__ import annotations

import secrets
from pathlib import Path

from squall.zk.identity import write_private

MASTER_CLASS = "org.apache.spark.deploy.master.Master"
WORKER_CLASS = "org.apache.spark.deploy.worker.Worker"
AUTH_FILE = "spark-auth.properties"


class SparkSetupError(ValueError):
    """A standalone daemon cannot start as asked (missing secret file, bad master URL)."""


def auth_properties(secret: str) -> str:
    return (
        "# squall spark master: Spark's RPC authentication for this standalone cluster.\n"
        "# Keep it 0600; copy it to every Spark worker host and every supervisor host.\n"
        "spark.authenticate true\n"
        f"spark.authenticate.secret {secret}\n"
        "spark.ui.killEnabled false\n"
        "spark.master.rest.enabled false\n"
    )


def ensure_auth_file(path: Path) -> bool:
    """Make the secret file if it is missing; True when it was made."""
    if path.exists():
        return False
    path.parent.mkdir(parents=True, exist_ok=True)
    write_private(path, auth_properties(secrets.token_urlsafe(32)))
    return True


def require_auth_file(path: Path) -> Path:
    if not path.is_file():
        raise SparkSetupError(
            f"{path} is missing: copy the file `squall spark master` made (mode 0600) here"
        )
    if path.stat().st_mode & 0o077:
        raise SparkSetupError(f"{path} holds a secret: make it readable by its owner only")
    return path


def check_master_url(url: str) -> str:
    if not url.startswith("spark://") or ":" not in url.removeprefix("spark://"):
        raise SparkSetupError(f"{url!r} is not a master URL such as spark://host:7077")
    return url


def master_command(
    spark_home: Path, host: str, port: int, webui_port: int, auth_file: Path
) -> list[str]:
    return [
        str(spark_home / "bin" / "spark-class"),
        MASTER_CLASS,
        *("--host", host, "--port", str(port), "--webui-port", str(webui_port)),
        *("--properties-file", str(auth_file)),
    ]


def worker_command(
    spark_home: Path,
    master_url: str,
    host: str,
    webui_port: int,
    cores: int | None,
    memory: str | None,
    work_dir: Path | None,
    auth_file: Path,
) -> list[str]:
    command = [str(spark_home / "bin" / "spark-class"), WORKER_CLASS, check_master_url(master_url)]
    command += ["--host", host, "--webui-port", str(webui_port)]
    if cores:
        command += ["--cores", str(cores)]
    if memory:
        command += ["--memory", memory]
    if work_dir is not None:
        command += ["--work-dir", str(work_dir)]
    return command + ["--properties-file", str(auth_file)]


def daemon_env(base: dict[str, str], spark_home: Path, host: str, python: str) -> dict[str, str]:
    """The daemons' environment: SPARK_LOCAL_IP binds their web UI (and the executors a
    worker starts) to `host`, not every interface."""
    return {
        **base,
        "SPARK_HOME": str(spark_home),
        "SPARK_LOCAL_IP": host,
        "PYSPARK_PYTHON": base.get("PYSPARK_PYTHON", python),
    }


def default_auth_file(security_dir: Path) -> Path:
    return security_dir / AUTH_FILE
