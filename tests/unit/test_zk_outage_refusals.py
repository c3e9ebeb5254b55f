"""Calls that must write to ZooKeeper (a profile request, credentials) are refused at once
while it is unreachable, saying so; they waited out kazoo's timeouts before (issue 35)."""

from types import SimpleNamespace

import pytest
from kazoo.protocol.states import KazooState

from squall import thrift_api as T
from squall.nimbus.reads.last_known import CachedReads, ZkOutage


def test_a_write_is_refused_at_once_during_an_outage_and_allowed_after():
    outage = ZkOutage("zk:2181", lambda: 1_700_000_000.0)
    reads = CachedReads(SimpleNamespace(), outage)
    reads.require_zookeeper("setWorkerProfiler")  # reachable: nothing to say
    outage.changed(KazooState.SUSPENDED)
    with pytest.raises(T.IllegalStateException) as refused:
        reads.require_zookeeper("uploadNewCredentials")
    text = refused.value.msg
    assert text.startswith("uploadNewCredentials: ZooKeeper unreachable since ")
    assert "try again once ZooKeeper is back (storm.zookeeper.servers)" in text
    outage.changed(KazooState.CONNECTED)
    reads.require_zookeeper("uploadNewCredentials")


def test_pending_profile_actions_are_answered_from_what_was_last_read():
    """getComponentPendingProfileActions reads through CachedReads.remembered."""
    outage = ZkOutage("zk:2181", lambda: 5.0)
    reads = CachedReads(SimpleNamespace(), outage)
    asked = []

    def stored():
        asked.append(1)
        return {"h_6700_jstack": "request"}

    key = ("profilerconfig", "t-1")
    assert reads.remembered(key, stored, {}) == {"h_6700_jstack": "request"}
    outage.changed(KazooState.LOST)
    assert reads.remembered(key, stored, {}) == {"h_6700_jstack": "request"}
    assert asked == [1]  # not asked of ZooKeeper during the outage
