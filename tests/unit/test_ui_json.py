"""The pure parts of `squall ui`: Storm's uptime strings, windows, latencies as Storm's
strings or null when unmeasured, groupings, and the access policy's decisions."""

import pytest

from squall import thrift_api as T
from squall.ui import access, cluster_json, topology_json, visualization
from squall.ui.access import AccessPolicy
from squall.ui.token import QUERY, matches, presented
from squall.ui.topology_json import ALL_TIME, BadRequest


@pytest.mark.parametrize(
    "secs, pretty",
    [(0, "0s"), (59, "59s"), (365, "6m 5s"), (3600, "1h 0m 0s"), (86400, "1d 0h 0m 0s")],
)
def test_pretty_uptime_as_storm(secs, pretty):
    assert cluster_json.pretty_uptime(secs) == pretty


def test_windows_and_sys():
    assert topology_json.parse_window(None) == ALL_TIME
    assert topology_json.parse_window("600") == "600"
    with pytest.raises(BadRequest, match="window"):
        topology_json.parse_window("601")
    assert topology_json.parse_sys("1") is True and topology_json.parse_sys(None) is False
    with pytest.raises(BadRequest, match="sys"):
        topology_json.parse_sys("yes")
    # a window nimbus has figures for is served as it is; another says it is all-time
    assert topology_json.window_hint("600", {"600": 1, ALL_TIME: 2}) == ("600", "10m 0s")
    served, hint = topology_json.window_hint("86400", {ALL_TIME: 2})
    assert served == ALL_TIME and "no 1d 0h 0m 0s window" in hint


def _spout_stats(latency):
    return T.ComponentAggregateStats(
        type=T.ComponentType.SPOUT,
        common_stats=T.CommonAggregateStats(
            num_executors=2, num_tasks=2, emitted=10, transferred=9, acked=8, failed=1
        ),
        specific_stats=T.SpecificAggregateStats(
            spout=T.SpoutAggregateStats(complete_latency_ms=latency)
        ),
        last_error=T.ErrorInfo(error="boom", error_time_secs=100, host="h", port=6700),
    )


def test_spout_json_latency_and_error():
    row = topology_json.spout_json("s p", _spout_stats(1.23456), now=130)
    assert row["completeLatency"] == "1.235" and row["encodedSpoutId"] == "s%20p"
    assert (row["lastError"], row["errorPort"], row["errorLapsedSecs"]) == ("boom", 6700, 30)
    assert (row["emitted"], row["acked"], row["failed"]) == (10, 8, 1)
    assert topology_json.spout_json("s", _spout_stats(None), 0)["completeLatency"] is None


def test_grouping_names():
    assert visualization.grouping_name(T.Grouping(fields=["w"])) == "fields"
    assert visualization.grouping_name(T.Grouping(fields=[])) == "global"
    assert visualization.grouping_name(T.Grouping(shuffle=T.NullStruct())) == "shuffle"


LOCAL = AccessPolicy.from_conf({"ui.host": "127.0.0.1", "nimbus.admins": ["admin", "ui"]})
REMOTE = AccessPolicy.from_conf(
    {"ui.host": "10.1.2.3", "nimbus.admins": ["admin"], "ui.users": ["carol"]}
)


def test_loopback_policy():
    assert access.is_loopback("127.0.0.2") and access.is_loopback("localhost")
    assert not access.is_loopback("0.0.0.0") and not access.is_loopback("10.1.2.3")
    assert access.decide(LOCAL, "GET", "127.0.0.1:8080", None, None) is None
    assert access.decide(LOCAL, "POST", "localhost:8080", "http://localhost:8080", None) is None
    assert access.decide(LOCAL, "GET", "evil.example:8080", None, None)[0] == 400
    assert access.decide(LOCAL, "POST", "127.0.0.1:8080", "http://evil.example", None)[0] == 403
    assert access.decide(LOCAL, "POST", "127.0.0.1:8080", "null", None)[0] == 403


def test_remote_policy_wants_listed_principals():
    assert not LOCAL.needs_certificate and REMOTE.needs_certificate
    assert access.decide(REMOTE, "GET", "10.1.2.3:8080", None, None)[0] == 403
    assert access.decide(REMOTE, "GET", "10.1.2.3:8080", None, "bob")[0] == 403
    assert access.decide(REMOTE, "GET", "10.1.2.3:8080", None, "carol") is None
    assert access.decide(REMOTE, "POST", "10.1.2.3:8080", None, "carol")[0] == 403
    assert access.decide(REMOTE, "POST", "10.1.2.3:8080", None, "admin") is None


def test_a_loopback_ui_with_a_token_wants_it_from_every_request():
    conf = {"ui.host": "127.0.0.1", "nimbus.admins": ["admin", "ui"]}
    policy = AccessPolicy.from_conf(conf, token="s3cret")
    for method in ("GET", "POST"):
        assert access.decide(policy, method, "127.0.0.1:8080", None, None)[0] == 401
        assert access.decide(policy, method, "127.0.0.1:8080", None, None, "guess")[0] == 401
        assert access.decide(policy, method, "127.0.0.1:8080", None, None, "s3cret") is None
    # the token does not lift the other checks
    assert access.decide(policy, "GET", "evil.example", None, None, "s3cret")[0] == 400
    cross = access.decide(policy, "POST", "127.0.0.1:8080", "http://evil.example", None, "s3cret")
    assert cross[0] == 403
    # off loopback certificates do the work, not the token
    remote = AccessPolicy.from_conf({**conf, "ui.host": "10.1.2.3"}, token="s3cret")
    assert remote.token is None


def test_the_page_itself_needs_no_token_but_a_wrong_one_is_refused():
    """A browser's navigation carries no header: the page's files are served bare, and its
    script sends the token from localStorage with each API call."""
    policy = AccessPolicy.from_conf({"ui.host": "127.0.0.1"}, token="s3cret")
    for path in ("/", "/ui.js", "/ui.css", "/index.html"):
        assert access.decide(policy, "GET", "127.0.0.1:8080", None, None, None, path) is None
    assert access.decide(policy, "GET", "127.0.0.1", None, None, "guess", "/")[0] == 401
    assert access.decide(policy, "POST", "127.0.0.1", None, None, None, "/")[0] == 401
    for path in ("/api/v1/cluster/summary", "/metrics", "/api/v1/log", "/ui.js/../metrics"):
        assert access.decide(policy, "GET", "127.0.0.1", None, None, None, path)[0] == 401


def test_the_token_travels_in_a_header_or_the_address_never_a_cookie():
    assert presented({"authorization": "Bearer abc"}, {}) == "abc"
    assert presented({"authorization": "Basic abc"}, {}) is None
    assert presented({"cookie": "squall_ui_token=abc"}, {}) is None
    assert presented({}, {QUERY: "abc"}) == "abc"
    assert presented({}, {}) is None
    assert matches("abc", "abc") and not matches("abc", "abd") and not matches("abc", None)


def test_open_mode_ui_stays_on_loopback():
    """Without the cluster's certificates the UI could not authenticate anyone: it refuses
    a non-loopback ui.host before binding anything."""
    from squall.config import cluster_conf
    from squall.ui.server import uvicorn_config

    conf = cluster_conf(**{"security": False, "ui.host": "0.0.0.0"})
    with pytest.raises(ValueError, match="not a loopback address"):
        uvicorn_config(conf)
    assert uvicorn_config({**conf, "ui.host": "127.0.0.1"}).ssl_certfile is None
