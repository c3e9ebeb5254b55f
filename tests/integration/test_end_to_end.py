"""Submit -> tasks heartbeat -> exact word counts (Spark) -> kill -> every node removed."""

import os
from pathlib import Path

from squall import thrift_api as T
from squall.local import topology_id, topology_progress, wait_for, wait_until_quiet
from squall.submit import submit_file

from .conftest import EXAMPLES, TOPOLOGIES


def wordcount_module():
    import importlib.util

    spec = importlib.util.spec_from_file_location("wc_check", EXAMPLES / "wordcount.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def run_until_done(cluster, example: str, out, **overrides) -> tuple[str, str]:
    """Submit an example topology and wait until every task beats and its input is done."""
    conf = cluster.client_conf()
    with cluster.client() as client:
        overrides = {"topology.output.dir": str(out), **overrides}
        name = submit_file(client, EXAMPLES / example, conf, overrides=overrides)
        tid = topology_id(client, name)
    wait_for(lambda: topology_progress(conf, tid), 120, "every task to heartbeat")
    wait_until_quiet(conf, tid, 240)
    return name, tid


def test_wordcount_runs_counts_exactly_and_is_removed_on_kill(cluster, tmp_path):
    out = tmp_path / "out"
    name, tid = run_until_done(cluster, "wordcount.py", out)
    assert tid and tid.startswith("wordcount-")
    with cluster.client() as client:
        [summary] = [t for t in client.getClusterInfo().topologies if t.id == tid]
        assert summary.status == "ACTIVE" and summary.num_tasks == 7  # spouts track: no acker

    wc = wordcount_module()
    texts = [p.read_text() for p in sorted(Path(wc.INPUT).iterdir())]
    assert wc.totals(out) == wc.plain_count(texts)

    with cluster.client() as client:
        info = client.getTopologyInfo(tid)
        assert {e.component_id for e in info.executors} == {
            "lines",
            "split",
            "count",
            "sink",
        }
        assert all(e.host == "127.0.0.1" and e.port > 0 for e in info.executors)
        # the SparkBolt's micro-batches, as its workers measured them
        page = client.getComponentPageInfo(tid, "count", ":all-time", False)
        count = page.window_to_stats[":all-time"].specific_stats.bolt
        assert count.spark_jobs > 0 and count.spark_rows == count.executed > 0
        assert count.spark_job_ms > 0 and count.execute_latency_ms > 0
        client.killTopologyWithOpts(name, T.KillOptions(wait_secs=0))

    zk = cluster.zk_client("nimbus")
    try:
        paths = [
            f"/squall/{kind}/{tid}" for kind in ("storms", "assignments", "tasks", "taskbeats")
        ]
        wait_for(lambda: not any(zk.exists(p) for p in paths), 60, "topology nodes removed")
    finally:
        zk.stop()
        zk.close()
    pid_files = list(cluster.directory.glob("supervisor*/supervisor/workers/*.pid"))
    wait_for(
        lambda: not list(cluster.directory.glob("supervisor*/supervisor/workers/*.pid")),
        60,
        f"workers to stop ({pid_files})",
    )
    with cluster.client() as client:
        assert all(t.id != tid for t in client.getClusterInfo().topologies)
    assert not any(_is_running(p) for p in pid_files)


def _is_running(pid_file) -> bool:
    try:
        os.kill(int(pid_file.read_text()), 0)
    except (OSError, ValueError):
        return False
    return True


def test_exact_wordcount_counts_exactly(cluster, tmp_path):
    """The exact variant (per-batch keys into an idempotent sink) on the same text."""
    out = tmp_path / "out"
    name, _ = run_until_done(cluster, "exact_wordcount.py", out, **{"topology.workers": 2})
    wc = wordcount_module()
    texts = [p.read_text() for p in sorted(Path(wc.INPUT).iterdir())]
    assert wc.totals(out) == wc.plain_count(texts)
    assert list(out.glob("sink-*.arrows")) and not list(out.glob("*.jsonl"))
    with cluster.client() as client:
        client.killTopologyWithOpts(name, T.KillOptions(wait_secs=0))


def test_sinks_write_under_the_topology_name_by_default(cluster, tmp_path):
    """Without topology.output.dir a sink writes to storm.local.dir/output/<topology name>
    on its supervisor's host: an operator finds a topology's files by the name they gave.
    A plain-Python topology (no Spark) that ends in a FileSink."""
    with cluster.client() as client:
        name = submit_file(
            client,
            TOPOLOGIES / "sink_numbers.py",
            cluster.client_conf(),
            overrides={"topology.output.dir": ""},
        )
        tid = topology_id(client, name)
    try:
        wait_until_quiet(cluster.client_conf(), tid, 120)
        files = list(cluster.directory.glob(f"*/output/{name}/sink-*.jsonl"))
        assert files, sorted(str(p) for p in cluster.directory.glob("*/output/**/*"))
        assert sum(len(p.read_text().splitlines()) for p in files) == 100
        assert not list(cluster.directory.glob("*/output/sink-*"))
    finally:
        with cluster.client() as client:
            client.killTopologyWithOpts(name, T.KillOptions(wait_secs=0))
