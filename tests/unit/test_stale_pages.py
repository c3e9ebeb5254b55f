"""The component and supervisor pages say when nimbus answered from what it last read
(ZooKeeper unreachable), as the cluster and topology pages do: the topology page showed
the note and the component page under it did not."""

import time

from squall import thrift_api as T
from squall.ui.cluster_json import supervisor_page
from squall.ui.component_json import component_page

SINCE = time.time() - 40


def component(**stale) -> object:
    return T.ComponentPageInfo(
        component_id="count",
        component_type=T.ComponentType.BOLT,
        topology_id="t-1",
        topology_name="t",
        **stale,
    )


def test_a_stale_component_page_says_so_and_names_zookeeper():
    page = component_page(
        component(stale_since=SINCE, stale_cause="ZooKeeper unreachable"), ":all-time", 0
    )
    assert page["stale"] is True
    assert page["staleNote"].startswith("ZooKeeper unreachable since ")
    assert component_page(component(), ":all-time", 0)["stale"] is False


def test_a_stale_supervisor_page_says_so():
    stale = T.SupervisorPageInfo(supervisor_summaries=[], worker_summaries=[], stale_since=SINCE)
    assert supervisor_page(stale)["staleNote"].endswith("figures as of then")
    assert supervisor_page(T.SupervisorPageInfo())["stale"] is False
