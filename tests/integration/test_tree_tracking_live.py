"""Both ways of tracking tuple trees on a live cluster of two workers, tuples and acks
crossing between them: spout tasks tracking their own (the default, no __acker tasks) and
Storm's __acker tasks (topology.spouts.track.trees: false). Every tuple is acked once."""

from __future__ import annotations

import pytest

from squall import thrift_api as T
from squall.local import LocalCluster, topology_id, wait_until_quiet
from squall.submit import submit_file

from .conftest import TOPOLOGIES
from .topologies.acked_words import TOTAL


@pytest.fixture(scope="module")
def cluster(tmp_path_factory):
    with LocalCluster(tmp_path_factory.mktemp("trees"), supervisors=1) as c:
        yield c


@pytest.mark.parametrize(("spouts_track", "ackers"), [(True, 0), (False, 2)])
def test_every_tuple_is_acked_once_across_two_workers(cluster, spouts_track, ackers):
    name = f"trees-{str(spouts_track).lower()}"
    overrides = {"topology.spouts.track.trees": spouts_track}
    with cluster.client() as client:
        submit_file(client, TOPOLOGIES / "acked_words.py", cluster.client_conf(), name, overrides)
        tid = topology_id(client, name)
        assert tid is not None
        progress = wait_until_quiet(cluster.base_conf_full(), tid, 120)
        assert progress["acked"] == TOTAL and progress["failed"] == 0
        info = client.getTopologyInfo(tid)
        assert [e.component_id for e in info.executors].count("__acker") == ackers
        assert len({(e.host, e.port) for e in info.executors}) == 2  # two workers
        client.killTopologyWithOpts(name, T.KillOptions(wait_secs=0))
