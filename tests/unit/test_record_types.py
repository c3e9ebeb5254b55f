"""Record decoding stays strict on its fast paths (squall/records.py caches each class's
field types and checks a map of Any by its keys only)."""

from __future__ import annotations

import json

import pytest

from squall.records import (
    PENDING_EVENTS,
    STATUSES,
    RecordError,
    SupervisorInfo,
    WorkerBeat,
    decode,
    encode,
)


def raw(**fields):
    return json.dumps({"seq": 1, "time_secs": 0, "uptime_secs": 0, **fields}).encode()


def test_a_beat_round_trips():
    beat = WorkerBeat(3, 10, 2, {1: {"executed": 5, "emitted": {"default": 2}}})
    assert decode(WorkerBeat, encode(beat), "b") == beat
    assert decode(WorkerBeat, encode(beat), "b") == beat  # the cached types, second time


@pytest.mark.parametrize(
    "bad",
    [
        {"tasks": {"1": [[1, 2]]}},  # read as the map {1: 2}: a stat named by a number
        {"tasks": {"1": "ab"}},  # a task's stats must be a map
        {"tasks": {"x": {}}},  # task ids are numbers
        {"seq": None},
    ],
)
def test_a_malformed_beat_is_refused_with_the_node_named(bad):
    with pytest.raises(RecordError, match="/b"):
        decode(WorkerBeat, raw(**bad), "/b")


def test_a_supervisor_with_a_port_that_is_not_a_number_is_refused():
    data = json.dumps({"host": "h", "ports": ["x"], "start_time_secs": 0}).encode()
    with pytest.raises(RecordError):
        decode(SupervisorInfo, data, "/s")
    data = json.dumps({"host": 5, "ports": [1], "start_time_secs": 0}).encode()
    with pytest.raises(RecordError, match="host"):
        decode(SupervisorInfo, data, "/s")


def test_the_statuses_and_events_a_storm_record_may_hold_are_the_state_machines():
    """The values a /storms record may hold (tests/security/test_zookeeper_trust.py refuses
    others) are the state machine's."""
    from squall.nimbus.core.states import EVENT_NAMES, TopologyStatus

    assert {s.value for s in TopologyStatus} == STATUSES
    assert set(EVENT_NAMES) == PENDING_EVENTS


@pytest.mark.parametrize("due", ["soon", True, None, [1]])
def test_a_storm_record_whose_pending_due_time_is_not_a_number_is_refused(due):
    import json

    from squall.records import StormBase

    good = StormBase("t", "active", 1, {"s": 1}, 0.0)
    data = json.loads(encode(good))
    data["pending"] = {"event": "remove", "due_secs": due}
    with pytest.raises(ValueError, match="due_secs"):
        decode(StormBase, json.dumps(data).encode(), "/storms/t")


def test_a_supervisor_record_says_its_spark_connect_state_and_an_older_one_still_reads():
    info = SupervisorInfo("h1", [6700], 900, spark_connect="failed: exited with code 1")
    assert decode(SupervisorInfo, encode(info), "/s") == info
    older = json.dumps({"host": "h1", "ports": [6700], "start_time_secs": 900}).encode()
    assert decode(SupervisorInfo, older, "/s").spark_connect == "unknown"


def test_a_newer_supervisor_record_with_fields_this_reader_lacks_still_reads():
    newer = {"host": "h1", "ports": [6700], "start_time_secs": 900, "spark_connect": "ready"}
    data = json.dumps({**newer, "a_later_field": {"x": 1}}).encode()
    assert decode(SupervisorInfo, data, "/s") == SupervisorInfo(
        "h1", [6700], 900, spark_connect="ready"
    )


def test_a_spark_connect_state_that_is_not_a_string_is_refused():
    data = json.dumps({"host": "h1", "ports": [6700], "start_time_secs": 9, "spark_connect": 1})
    with pytest.raises(RecordError, match="spark_connect"):
        decode(SupervisorInfo, data.encode(), "/s")
