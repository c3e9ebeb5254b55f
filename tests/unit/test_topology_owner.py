"""`owner` in every TopologySummary and TopologyInfo: the submitter nimbus recorded, which
is the TLS principal, or in open mode the OS user nimbus runs as (Storm's
submitTopologyWithOpts: the principal's local name, else System.getProperty("user.name"))."""

import getpass
import json

from squall.nimbus.reads.summaries import cluster_summary, topology_info
from squall.nimbus.rpc.handler import _with_submitter
from squall.records import StormBase


def test_the_submitter_is_the_principal_or_nimbuss_os_user():
    forged = json.dumps({"topology.submitter.user": "root", "topology.workers": 2})
    secure = json.loads(_with_submitter(forged, "alice"))
    assert secure["topology.submitter.user"] == secure["topology.submitter.principal"] == "alice"
    assert secure["topology.workers"] == 2
    open_mode = json.loads(_with_submitter(forged, None))
    assert open_mode["topology.submitter.user"] == getpass.getuser()  # never the client's word
    assert open_mode["topology.submitter.principal"] == ""
    assert _with_submitter("[1]", None) == "[1]"  # left for the controller to refuse


def test_summaries_carry_the_owner():
    owned = StormBase("wc", "active", 1000, 1, {"a": 1}, owner="alice")
    legacy = StormBase("old", "active", 1000, 1, {"a": 1})  # recorded before owners were
    summary = cluster_summary({"t-1": owned, "t-2": legacy}, {}, {}, {}, [], 1100)
    assert [(t.id, t.owner) for t in summary.topologies] == [("t-1", "alice"), ("t-2", None)]
    assert topology_info("t-1", owned, None, {1: "a"}, {}, {}, 1100).owner == "alice"
