"""Spouts wait until every task of the topology is ready (worker/readiness.py): a bolt that
starts slower than the message timeout, in another worker, loses no tuple to a timeout."""

import pytest

from squall.local import LocalCluster, topology_id, topology_progress, wait_for
from squall.submit import submit_file

from .conftest import TOPOLOGIES


@pytest.fixture(scope="module")
def cluster(tmp_path_factory):
    with LocalCluster(tmp_path_factory.mktemp("slow-start"), supervisors=1) as c:
        yield c


def test_no_tuple_times_out_while_a_bolt_is_still_starting(cluster):
    with cluster.client() as client:
        submit_file(client, TOPOLOGIES / "slow_start.py", cluster.client_conf(), name="slow")
        tid = topology_id(client, "slow")
    conf = cluster.client_conf()

    def all_acked():
        progress = topology_progress(conf, tid)
        return progress if progress and progress["executed"] >= 50 else None

    progress = wait_for(all_acked, 120, "the 50 tuples to be processed")
    assert progress["failed"] == 0, progress  # before the gate: every one timed out once
    assert progress["executed"] == 50, progress
