"""The README's first topology (examples/first_topology.py) on a cluster of two supervisors:
its workers run on both, read the data file shipped with the topology, and the sink's counts,
in the default output dir (storm.local.dir/output/<topology name>), equal a plain count."""

import importlib.util

from squall import thrift_api as T
from squall.cluster_waits import topology_id, topology_progress, wait_for, wait_until_quiet
from squall.records import Assignment, decode
from squall.submit import submit_file

from .conftest import EXAMPLES


def example_module():
    spec = importlib.util.spec_from_file_location("first_check", EXAMPLES / "first_topology.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_first_topology_counts_exactly_on_two_supervisors(cluster, zk):
    conf = cluster.client_conf()
    with cluster.client() as client:
        # no topology.output.dir: the sink writes where the README says
        name = submit_file(client, EXAMPLES / "first_topology.py", conf)
        tid = topology_id(client, name)
    try:
        wait_for(lambda: topology_progress(conf, tid), 120, "every task to heartbeat")
        progress = wait_until_quiet(conf, tid, 240)
        data, _ = zk.get(f"/squall/assignments/{tid}")
        slots = decode(Assignment, data, tid).slots()
        # topology.workers: 2, one on each supervisor
        assert {node for node, _ in slots} == {"supervisor1", "supervisor2"}, slots
        assert progress["failed"] == 0 and progress["errors"] == 0

        [out] = list(cluster.directory.glob(f"supervisor*/output/{name}"))
        example = example_module()
        text = (EXAMPLES / "first_topology.txt").read_text(encoding="utf-8")
        # each line emitted once although two spout tasks read the file: a line twice would
        # double its words' counts
        assert example.totals(out) == example.plain_count(text)
    finally:
        with cluster.client() as client:
            client.killTopologyWithOpts(name, T.KillOptions(wait_secs=0))
