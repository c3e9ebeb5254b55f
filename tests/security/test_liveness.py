"""Liveness truth and throttled error reports against a live cluster (issue #11, items 5 and 7).

An attacker found that a bolt blocked forever, or a SparkBolt whose SparkSession failed to
start, left the topology ACTIVE with no error while tuples replayed forever; that the Spark
error shown was a Java stack line, not the cause; and that a failing bolt rewrote its /errors
node tens of times a second. Each test runs one topology built for that case on a real
cluster (ZooKeeper, nimbus, a supervisor, worker processes) and reads what nimbus answers."""

import math
import re
import time
from pathlib import Path

import pytest
from kazoo.client import KazooClient

from squall import thrift_api as T
from squall.local import LocalCluster, topology_id, topology_progress, wait_for
from squall.submit import submit_file

TOPOLOGIES = Path(__file__).parent / "topologies"


@pytest.fixture(scope="module")
def cluster(tmp_path_factory):
    with LocalCluster(tmp_path_factory.mktemp("cluster"), supervisors=1) as c:
        yield c


@pytest.fixture
def zk(cluster):
    client = KazooClient(hosts=cluster.zookeeper.hosts)
    client.start()
    yield client
    client.stop()
    client.close()


@pytest.fixture
def running(cluster):
    """Submit a topology file under a name; killed (and waited out) when the test ends."""
    names = []

    def submit(file: str, name: str, overrides: dict | None = None) -> str:
        with cluster.client() as client:
            conf = cluster.client_conf()
            submit_file(client, TOPOLOGIES / file, conf, name=name, overrides=overrides)
            names.append(name)
            return topology_id(client, name)

    yield submit
    with cluster.client() as client:
        for name in names:
            client.killTopologyWithOpts(name, T.KillOptions(wait_secs=0))
        for name in names:
            wait_for(lambda n=name: client.isTopologyNameAllowed(n), 60, f"{name} removed")


def errors(cluster, tid: str, component: str) -> list:
    with cluster.client() as client:
        return list(client.getTopologyInfo(tid).errors.get(component, []))


def worker_pid(cluster, tid: str) -> int | None:
    """The pid of the topology's one worker, from its supervisor's pid file."""
    files = sorted(cluster.directory.glob(f"supervisor*/supervisor/workers/{tid}-*.pid"))
    try:
        return int(files[0].read_text()) if files else None
    except (OSError, ValueError):
        return None


def restarted(cluster, tid: str, first: int) -> bool:
    pid = worker_pid(cluster, tid)
    return pid is not None and pid != first


def test_a_blocked_bolt_is_reported_with_where_it_is_stuck_and_its_worker_restarts(
    cluster, running
):
    tid = running("stuck.py", "stuck")
    first = wait_for(lambda: worker_pid(cluster, tid), 90, "the worker to start")
    reports = wait_for(
        lambda: [e for e in errors(cluster, tid, "blocked") if "made no progress" in e.error],
        90,
        "the stall reported in getTopologyInfo",
    )
    text = reports[0].error
    assert "\n" not in text
    assert re.fullmatch(
        r"bolt blocked task \d+ made no progress for \d+ s with [1-9]\d* tuples waiting; "
        r"stuck at \S*stuck\.py:\d+ in process \(waiting in \S*threading\.py:\d+ in wait\)",
        text,
    ), text
    assert 5 <= int(re.search(r"for (\d+) s", text).group(1)) < 60
    wait_for(lambda: restarted(cluster, tid, first), 60, "the supervisor to restart the worker")


@pytest.mark.parametrize(
    ("master", "cause"),
    [
        # SparkContext refuses it: a Py4JJavaError whose Java cause is the line
        ("local[0]", "org.apache.spark.SparkException: Asked to run locally with 0 threads"),
        # spark-submit refuses it and the JVM exits before PySpark reaches it: the line is
        # only in what the JVM printed
        (
            "bogus://nowhere",
            "org.apache.spark.SparkException: "
            "Master must either be yarn or start with spark, k8s, or local",
        ),
    ],
)
def test_a_spark_session_that_cannot_start_shows_the_java_cause_in_one_line(
    cluster, running, master, cause
):
    tid = running("spark_fails.py", "spark-fails", {"spark.master": master})
    first = wait_for(lambda: worker_pid(cluster, tid), 90, "the worker to start")
    reports = wait_for(lambda: errors(cluster, tid, "sparky"), 120, "the Spark failure reported")
    assert reports[0].error.splitlines()[0] == cause
    for report in reports:
        assert "\tat " not in report.error and "at org.apache" not in report.error
    wait_for(lambda: restarted(cluster, tid, first), 90, "the worker restarted, not left up")


def test_a_bolt_raising_on_every_tuple_writes_at_most_n_reports_per_interval(cluster, running, zk):
    limit, interval = 2, 3  # the topology's topology.max.error.report.per.interval, ...secs
    tid = running("raising.py", "raising")
    path = f"/squall/errors/{tid}/raiser"
    wait_for(lambda: zk.exists(path), 90, "the first error report")
    conf = cluster.client_conf()
    start_version, started = zk.exists(path).version, time.monotonic()
    start_errors = wait_for(lambda: topology_progress(conf, tid), 30, "the first beats")["errors"]

    def noted() -> list:
        return [e for e in errors(cluster, tid, "raiser") if "more errors in the last" in e.error]

    # two reports carrying a count: at least one whole interval was throttled after `started`
    wait_for(lambda: len(noted()) >= 3, 60, "reports with the count of the held-back errors")
    end_version, ended = zk.exists(path).version, time.monotonic()
    raised = topology_progress(conf, tid)["errors"] - start_errors

    writes = end_version - start_version
    allowed = limit * (math.floor((ended - started) / interval) + 2)
    assert 0 < writes <= allowed, (writes, ended - started)
    assert raised > 10 * writes, (raised, writes)  # the bolt really failed far more often
    note = re.search(r"\(and (\d+) more errors in the last (\d+) s\)", noted()[-1].error)
    assert note and int(note.group(1)) > 0 and int(note.group(2)) <= 2 * interval
    first_line = noted()[-1].error.splitlines()[0]
    assert first_line.startswith("ValueError: cannot handle ")
    for report in errors(cluster, tid, "raiser"):
        assert len(report.error) <= 2048
