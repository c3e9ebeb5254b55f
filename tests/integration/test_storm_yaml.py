"""A Storm user's storm.yaml runs a squall cluster: nimbus and a supervisor start with every key
of Storm 2.8.8's conf/defaults.yaml in their conf file (ZooKeeper, nimbus address and local
dir the fixture's), say once which Storm keys they ignore, and a topology conf carrying
streamparse's keys, topology.name and topology.max.task.parallelism is honoured as Storm does."""

import json
from pathlib import Path
from typing import Any

import pytest
import yaml

from squall import thrift_api as T
from squall.local import LocalCluster, wait_for
from squall.submit import submit_file

TINY = Path(__file__).parent / "topologies" / "tiny.py"
STORM_DEFAULTS = Path(__file__).parents[1] / "data" / "storm-v2.8.8-defaults.yaml"


class StormYamlCluster(LocalCluster):
    """Every daemon's conf file: Storm's defaults.yaml, the fixture's settings over it."""

    def base_conf(self) -> dict[str, Any]:
        return {**yaml.safe_load(STORM_DEFAULTS.read_text()), **super().base_conf()}


@pytest.fixture(scope="module")
def cluster(tmp_path_factory):
    with StormYamlCluster(tmp_path_factory.mktemp("storm-yaml"), supervisors=1) as c:
        yield c


def logged(cluster, name: str) -> str:
    return (cluster.directory / f"{name}.log").read_text(errors="replace")


def test_daemons_start_with_storms_defaults_and_name_what_they_ignore(cluster):
    conf_file = cluster.directory / "nimbus.yaml"
    written = yaml.safe_load(conf_file.read_text())
    assert set(yaml.safe_load(STORM_DEFAULTS.read_text())) <= set(written)
    for daemon in ("nimbus", "supervisor1"):
        text = logged(cluster, daemon)
        (line,) = [line for line in text.splitlines() if "accepted and ignored" in line]
        assert "(Storm key squall does not implement)" in line
        assert "worker.childopts" in line and "storm.messaging.transport" in line
        assert "did you mean" not in text


def test_a_topology_conf_as_storm_and_streamparse_send_it(cluster):
    overrides = {
        "storm.workers.list": ["localhost"],  # streamparse's
        "topology.original_name": "counted",  # streamparse's
        "topology.name": "something else",  # nimbus sets the real one, as Storm
        "topology.max.task.parallelism": 1,  # tiny asks for 2 of each
        "topology.kryo.register": ["org.example.Word"],  # a Storm key squall ignores
    }
    with cluster.client() as client:
        submit_file(client, TINY, cluster.client_conf(), name="counted", overrides=overrides)
        try:
            tid = next(s.id for s in client.getClusterInfo().topologies if s.name == "counted")
            stored = json.loads(client.getTopologyConf(tid))
            components = client.getTopology(tid)
            parallelism = {
                name: spec.common.parallelism_hint
                for name, spec in {**components.spouts, **components.bolts}.items()
            }
        finally:
            client.killTopologyWithOpts("counted", T.KillOptions(wait_secs=0))
        wait_for(
            lambda: not [s for s in client.getClusterInfo().topologies if s.name == "counted"],
            120,
            "the topology gone",
        )
    assert stored["topology.name"] == "counted"
    assert stored["topology.original_name"] == "counted"
    assert "storm.workers.list" not in stored
    assert stored["topology.kryo.register"] == ["org.example.Word"]
    assert parallelism == {"numbers": 1, "sink": 1}
    text = logged(cluster, "nimbus")
    assert "topology 'counted' conf: left out: storm.workers.list (cluster settings" in text
    ignored = "topology 'counted' conf: accepted and ignored (Storm key squall does not implement)"
    assert f"{ignored}: topology.kryo.register" in text
