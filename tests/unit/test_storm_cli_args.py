"""Storm's CLI argument shapes (squall.commands.storm_args), parsed as Storm's command classes
parse them, and the pure parts of `squall list`, `monitor` and `heartbeats`."""

from types import SimpleNamespace as NS

import pytest

from squall import thrift_api as T
from squall.commands.heartbeats import storm_shaped, zk_path
from squall.commands.listing import listing_json, listing_lines
from squall.commands.storm_args import (
    StormArgError,
    access_control,
    acl,
    acl_text,
    component_count,
    credential_pairs,
    log_config,
    log_setting,
    properties,
    throughput,
)
from squall.log_config import REMOVE, UPDATE
from squall.records import WorkerBeat

USER, OTHER = T.AccessControlType.USER, T.AccessControlType.OTHER


def test_log_settings_as_storm_parses_them():
    name, level = log_setting("ROOT=DEBUG:30")
    assert name == "ROOT"
    assert (level.action, level.target_log_level, level.reset_log_level_timeout_secs) == (
        UPDATE,
        "DEBUG",
        30,
    )
    name, level = log_setting("com.myapp=warn")  # no timeout: for good; any case
    assert (name, level.target_log_level, level.reset_log_level_timeout_secs) == (
        "com.myapp",
        "WARN",
        0,
    )


@pytest.mark.parametrize(
    "bad, problem",
    [
        ("ROOT", "LOGGER=LEVEL"),
        ("=DEBUG", "LOGGER=LEVEL"),
        ("ROOT=LOUD", "'LOUD' is not one of"),
        ("ROOT=DEBUG:soon", "'soon' is not whole seconds"),
        ("ROOT=DEBUG:-5", "not whole seconds"),
        ("a=b=DEBUG", "LOGGER=LEVEL"),
    ],
)
def test_bad_log_settings_name_the_problem(bad, problem):
    with pytest.raises(StormArgError, match=problem):
        log_setting(bad)


def test_log_config_updates_and_removals():
    config = log_config(["ROOT=DEBUG:30", "com.a=ERROR"], ["com.b", "com.a"])
    levels = config.named_logger_level
    assert set(levels) == {"ROOT", "com.a", "com.b"}
    assert levels["com.b"].action == REMOVE and levels["com.a"].action == REMOVE  # -r wins
    assert levels["ROOT"].target_log_level == "DEBUG"
    with pytest.raises(StormArgError, match="at least one"):
        log_config([], [])


def test_blob_acls_as_storms_acl_handler_parses_and_prints_them():
    entries = acl("u:alice:rwa,u:bob:rw,o::r")
    assert [(e.type, e.name, e.access) for e in entries] == [
        (USER, "alice", 7),
        (USER, "bob", 3),
        (OTHER, "", 1),
    ]
    assert acl_text(entries) == "[u:alice:rwa, u:bob:rw-, o::r--]"
    one = access_control("r-a")  # one part: other's access
    assert (one.type, one.name, one.access) == (OTHER, "", 5)
    two = access_control("carol:w")  # two parts: a user's
    assert (two.type, two.name, two.access) == (USER, "carol", 2)
    assert acl(None) == [] and acl("") == []


@pytest.mark.parametrize(
    "bad, problem",
    [("x:alice:r", "not a valid access control type"), ("u:a:rx", "r, w, a"), ("a:b:c:d", "parse")],
)
def test_bad_acls_name_the_problem(bad, problem):
    with pytest.raises(StormArgError, match=problem):
        access_control(bad)


def test_java_properties_files():
    text = (
        "# a comment\n"
        "! another\n"
        "\n"
        "plain=1\n"
        "  spaced : two words \n"
        "bare value\n"
        "long = first \\\n"
        "       second\n"
        "esc\\=aped=a\\tb\n"
        "empty=\n"
    )
    assert properties(text) == {
        "plain": "1",
        "spaced": "two words ",
        "bare": "value",
        "long": "first second",
        "esc=aped": "a\tb",
        "empty": "",
    }


def test_credential_pairs_must_pair():
    assert credential_pairs(["a", "1", "b", "2"]) == {"a": "1", "b": "2"}
    with pytest.raises(StormArgError, match="pairs"):
        credential_pairs(["a", "1", "b"])


def executor(component, emitted, transferred=None):
    stats = NS(emitted={":all-time": emitted}, transferred={":all-time": transferred or {}})
    return NS(component_id=component, stats=stats)


def test_monitor_sums_a_components_all_time_counts_of_one_stream():
    info = NS(
        executors=[
            executor("words", {"default": 10, "other": 5}),
            executor("words", {"default": 7}, {"default": 3}),
            NS(component_id="words", stats=None),  # not running yet: counts, adds nothing
            executor("count", {"default": 100}),
        ]
    )
    assert component_count(info, "words", "emitted", "default") == (3, 17)
    assert component_count(info, "words", "transferred", "default") == (3, 3)
    assert component_count(info, "words", "emitted", "missing") == (3, None)
    assert component_count(info, "nope", "emitted", "default") == (0, None)
    assert throughput(0, 4000) == 0.0 and throughput(10, 0) == 0.0
    assert throughput(8000, 4000) == 2.0  # tuples per ms: thousands per second


def summary(name, tid, owner, sched="Fully Scheduled"):
    return NS(
        name=name,
        id=tid,
        status="ACTIVE",
        num_tasks=4,
        num_executors=4,
        num_workers=2,
        uptime_secs=12,
        owner=owner,
        sched_status=sched,
    )


def test_list_prints_storms_columns_and_never_cuts_an_id():
    long_id = "a-very-long-topology-name-1-1700000000-" + "x" * 80
    info = NS(
        topologies=[
            summary("a-very-long-topology-name-1", long_id, "alice"),
            summary("b", "b-2-1", None, "Not enough resources to schedule: needs 600 MB"),
        ],
        supervisors=[
            NS(
                supervisor_id="supervisor1",
                host="h1",
                num_workers=4,
                num_used_workers=2,
                uptime_secs=9,
                version="2.8.8+squall.0.1.0",
            )
        ],
    )
    lines = listing_lines(info)
    columns = "Topology_name Status Num_tasks Num_workers Uptime_secs Topology_Id Owner"
    assert lines[0].split() == columns.split()  # Storm's ListTopologies
    assert lines[1] == "-" * 88
    assert lines[2].split() == ["a-very-long-topology-name-1", "ACTIVE", "4", "2", "12"] + [
        long_id,
        "alice",
    ]
    assert lines[3].split() == ["b", "ACTIVE", "4", "2", "12", "b-2-1"]  # no owner: empty
    assert "b (b-2-1): Not enough resources to schedule: needs 600 MB" in lines
    assert any(line.split()[:2] == ["supervisor1", "h1"] for line in lines)
    assert listing_lines(NS(topologies=[], supervisors=[])) == [
        "No topologies running.",
        "",
        "No supervisors running.",
    ]
    import json

    document = json.loads(listing_json(info))
    assert document["topologies"][0]["id"] == long_id
    assert document["topologies"][0]["owner"] == "alice"
    assert document["supervisors"][0]["num_used_workers"] == 2


def test_heartbeat_paths_and_storms_shape():
    assert zk_path("/storm", "/workerbeats") == "/storm/taskbeats"
    assert zk_path("/storm", "workerbeats/t-1/h-6700") == "/storm/taskbeats/t-1/h-6700"
    assert zk_path("/squall/", "/taskbeats/t-1") == "/squall/taskbeats/t-1"
    assert zk_path("/storm", "/") == "/storm"
    beat = WorkerBeat(seq=3, time_secs=100, uptime_secs=7, tasks={2: {"emitted": {"d": 1}}})
    assert storm_shaped("t-1", beat) == {
        "storm-id": "t-1",
        "executor-stats": {"2": {"emitted": {"d": 1}}},
        "uptime": 7,
        "time-secs": 100,
        "seq": 3,
    }
