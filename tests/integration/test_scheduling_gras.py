"""GenericResourceAwareStrategy against a live cluster: a supervisor reports its
supervisor.resources.map in ZooKeeper, a topology whose components need a GPU
(topology.component.resources.map) lands on it and runs, and one needing a resource no
supervisor offers is not placed, with the resource named in getTopologyInfo and
`squall list` (docs/scheduling.md, "Generic resources")."""

from collections import Counter

import pytest

from squall.local import LocalCluster, wait_for
from squall.records import Assignment, SupervisorInfo, decode
from squall.submit import submit_file

from .conftest import TOPOLOGIES, squall

SIZED = TOPOLOGIES / "sized.py"
GRAS = "org.apache.storm.scheduler.resource.strategies.scheduling.GenericResourceAwareStrategy"


@pytest.fixture(scope="module")
def cluster(tmp_path_factory):
    conf = {"nimbus.task.timeout.secs": 120, "nimbus.task.launch.secs": 120}
    offers = {2: {"supervisor.resources.map": {"gpu.count": 2}}}
    directory = tmp_path_factory.mktemp("gras")
    with LocalCluster(directory, supervisors=2, conf=conf, supervisor_confs=offers) as c:
        yield c


def submit(cluster, client, name, needs):
    overrides = {"topology.scheduler.strategy": GRAS, "topology.component.resources.map": needs}
    submit_file(client, SIZED, cluster.client_conf(), name=name, overrides=overrides)
    return {t.name: t.id for t in client.getClusterInfo().topologies}[name]


def tasks_per_supervisor(zk, tid):
    data, _ = zk.get(f"/squall/assignments/{tid}")
    return Counter(slot[0] for slot in decode(Assignment, data, tid).task_slots.values())


def test_a_gpu_topology_lands_on_the_gpu_supervisor_and_an_unoffered_resource_is_named(cluster, zk):
    offered = decode(SupervisorInfo, zk.get("/squall/supervisors/supervisor2")[0], "s2")
    assert offered.generic_resources == {"gpu.count": 2.0}
    plain = decode(SupervisorInfo, zk.get("/squall/supervisors/supervisor1")[0], "s1")
    assert plain.generic_resources == {}

    with cluster.client() as client:
        gpu = submit(cluster, client, "gpu", {"gpu.count": 1})
        assert tasks_per_supervisor(zk, gpu) == {"supervisor2": 2}
        wait_for(
            lambda: client.getTopologyInfo(gpu).sched_status == "Fully Scheduled",
            90,
            "the GPU topology to run",
        )

        fpga = submit(cluster, client, "fpga", {"fpga.count": 1})
        assert tasks_per_supervisor(zk, fpga) == {}
        sched = client.getTopologyInfo(fpga).sched_status
        assert "no supervisor offers fpga.count" in sched, sched
        listed = squall(cluster, "list")
        assert listed.returncode == 0, listed.stderr
        assert f"fpga ({fpga}): Not enough resources to schedule" in listed.stdout
        assert "fpga.count" in listed.stdout
