"""While ZooKeeper is unreachable nimbus answers its Thrift reads from what it last read,
marked stale (nimbus/reads/last_known.py), and the CLI and UI say so (squall/staleness.py); the
live side is tests/integration/test_zookeeper_outage_reads.py."""

import json
import logging
import time
from contextlib import contextmanager
from types import SimpleNamespace

import pytest
from kazoo.exceptions import ConnectionLoss
from kazoo.protocol.states import KazooState
from thriftpy2.thrift import TApplicationException

from squall import client as client_mod
from squall import thrift_api as T
from squall.commands.listing import listing_json, listing_lines
from squall.config import load_defaults
from squall.nimbus.reads.last_known import CachedReads, ZkOutage
from squall.staleness import stale_json, stale_mark, stale_note

SINCE = time.mktime((2026, 11, 28, 11, 52, 7, 0, 0, -1))  # local time 11:52:07


def test_a_stale_note_says_since_when_how_long_and_why():
    note = stale_note(SINCE, "ZooKeeper unreachable", SINCE + 40.7)
    assert note == "ZooKeeper unreachable since 11:52:07 (40 s): figures as of then"
    assert stale_note(SINCE, "ZooKeeper unreachable") == (
        "ZooKeeper unreachable since 11:52:07: figures as of then"
    )


def test_only_an_answer_nimbus_marked_is_stale():
    fresh = T.ClusterSummary(supervisors=[], topologies=[], nimbuses=[])
    assert stale_mark(fresh) is None
    assert stale_json(fresh) == {"stale": False, "staleNote": None}
    marked = T.ClusterSummary(supervisors=[], topologies=[], nimbuses=[], stale_since=SINCE)
    assert stale_mark(marked) == (SINCE, "ZooKeeper unreachable")
    assert stale_json(marked)["stale"] is True
    assert "since 11:52:07" in stale_json(marked)["staleNote"]


def _summary(**stale):
    topology = T.TopologySummary(
        id="t-1-1", name="t", num_tasks=2, num_executors=2, num_workers=1, uptime_secs=5,
        status="ACTIVE", sched_status="Fully Scheduled", owner="me",
    )  # fmt: skip
    return T.ClusterSummary(supervisors=[], topologies=[topology], nimbuses=[], **stale)


def test_squall_list_says_first_that_its_figures_are_as_of_the_outage():
    stale = _summary(stale_since=SINCE, stale_cause="ZooKeeper unreachable")
    lines = listing_lines(stale, SINCE + 12)
    assert lines[0] == "ZooKeeper unreachable since 11:52:07 (12 s): figures as of then"
    assert any(line.startswith("t ") and "t-1-1" in line for line in lines)
    assert not any("ZooKeeper" in line for line in listing_lines(_summary(), SINCE))
    as_json = json.loads(listing_json(stale))
    assert (as_json["stale_since"], as_json["stale_cause"]) == (SINCE, "ZooKeeper unreachable")
    assert json.loads(listing_json(_summary()))["stale_since"] is None


class Clock:
    def __init__(self, now):
        self.now = now

    def __call__(self):
        return self.now


def test_an_outage_runs_from_a_lost_connection_to_the_next_and_is_logged_once(caplog):
    clock = Clock(100.0)
    outage = ZkOutage("zk1:2181,zk2:2181", clock)
    assert outage.stale() is None
    with caplog.at_level(logging.WARNING, logger="squall.nimbus"):
        outage.changed(KazooState.SUSPENDED)
        clock.now = 130.0
        outage.changed(KazooState.LOST)  # the same outage: still since 100
        assert outage.stale().since == 100.0
        assert "ZooKeeper" in outage.stale().cause
        outage.changed(KazooState.CONNECTED)
    assert outage.stale() is None
    lost = [r.getMessage() for r in caplog.records if "unreachable" in r.getMessage()]
    assert len(lost) == 1 and "zk1:2181,zk2:2181" in lost[0]
    assert any("reachable again after 30 s" in r.getMessage() for r in caplog.records)


def test_a_client_not_connected_when_listened_to_starts_the_outage():
    listeners = []
    zk = SimpleNamespace(connected=False, add_listener=listeners.append)
    outage = ZkOutage("zk:2181", Clock(7.0))
    outage.listen(zk)
    assert outage.stale().since == 7.0 and listeners == [outage.changed]


def test_reads_go_to_zookeeper_while_it_is_reachable_and_to_memory_while_not():
    beats = {"t-1": {("node", 6700): "beat"}}
    calls = []

    def read_beats(tid):
        calls.append(tid)
        return beats[tid]

    outage = ZkOutage("zk:2181", Clock(1.0))
    reads = CachedReads(SimpleNamespace(read_beats=read_beats), outage)
    assert reads.read_beats("t-1") == beats["t-1"] and calls == ["t-1"]
    outage.changed(KazooState.SUSPENDED)
    beats["t-1"] = {}  # what ZooKeeper would say now: not asked
    assert reads.read_beats("t-1") == {("node", 6700): "beat"}
    assert reads.read_errors("t-2") == {}  # never read: nothing known
    assert calls == ["t-1"] and reads.stale().since == 1.0
    outage.changed(KazooState.CONNECTED)
    assert reads.read_beats("t-1") == {} and reads.stale() is None


def test_a_read_the_connection_drops_under_answers_what_was_last_read():
    answers = [{"n1": "nimbus"}, ConnectionLoss()]

    def read_nimbuses():
        answer = answers.pop(0)
        if isinstance(answer, Exception):
            raise answer
        return answer

    reads = CachedReads(SimpleNamespace(read_nimbuses=read_nimbuses), ZkOutage("zk:2181"))
    assert reads.read_nimbuses() == {"n1": "nimbus"}
    assert reads.read_nimbuses() == {"n1": "nimbus"}


def test_a_read_refused_for_another_reason_is_raised():
    def read_bases():
        raise PermissionError("no access")

    reads = CachedReads(SimpleNamespace(read_bases=read_bases), ZkOutage("zk:2181"))
    with pytest.raises(PermissionError):
        reads.read_bases()


def _seeds(monkeypatch, answers):
    """nimbus_address against fake seeds: each answers getLeader with `answers[port]`."""

    class Seed:
        def __init__(self, port):
            self.port = port

        def getLeader(self):  # noqa: N802 - Thrift's name
            answer = answers[self.port]
            if isinstance(answer, Exception):
                raise answer
            return answer

    @contextmanager
    def connect(host, port, timeout_secs, context):
        yield Seed(port)

    monkeypatch.setattr(client_mod, "_connect", connect)
    conf = {**load_defaults(), "security": False, "nimbus.seeds": ["h:1", "h:2"]}
    return client_mod.nimbus_address(conf)


def test_during_an_outage_the_cli_reaches_a_nimbus_that_knows_no_leader(monkeypatch):
    refusal = TApplicationException(
        TApplicationException.INTERNAL_ERROR, "no nimbus leader known: ZooKeeper unreachable"
    )
    down = ConnectionRefusedError("Could not connect")
    assert _seeds(monkeypatch, {1: down, 2: refusal}) == ("h", 2)
    leader = T.NimbusSummary(host="l", port=9, uptime_secs=1, isLeader=True, version="v")
    assert _seeds(monkeypatch, {1: refusal, 2: leader}) == ("l", 9)  # a leader first


def test_with_no_nimbus_answering_there_is_no_leader(monkeypatch):
    down = ConnectionRefusedError("Could not connect")
    with pytest.raises(client_mod.NoLeaderError, match="no nimbus leader found"):
        _seeds(monkeypatch, {1: down, 2: down})
