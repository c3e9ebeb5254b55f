"""squall.profile_requests: Storm's profiling requests as plain data (no I/O)."""

import pytest

from squall import profile_requests as pr

NOW = 1_000_000


def req(action: str, stamp: int, host: str = "h1", port: int = 6700) -> pr.ProfileRequest:
    return pr.ProfileRequest(host, port, action, stamp)


def test_a_request_needs_a_host_one_port_and_a_known_action():
    assert pr.request("h1", {6700}, 4, None, NOW) == req("JSTACK_DUMP", NOW)
    assert pr.request("fe80::1", {6700}, 4, None, NOW).host == "fe80::1"
    assert pr.request("h1", [6700], 0, NOW + 5, NOW) == req("JPROFILE_STOP", NOW + 5)
    for host, ports, action in [
        ("", {6700}, 4),
        ("../x", {6700}, 4),
        ("a/b", {6700}, 4),
        ("a\x00b", {6700}, 4),
        ("x" * 256, {6700}, 4),
        ("h1", set(), 4),
        ("h1", {6700, 6701}, 4),
        ("h1", {70000}, 4),
        ("h1", {6700}, 6),
        ("h1", {6700}, None),
    ]:
        with pytest.raises(pr.ProfileRequestError):
            pr.request(host, ports, action, None, NOW)


def test_stored_form_round_trips_and_junk_is_refused():
    r = req("JMAP_DUMP", NOW)
    assert pr.decode(pr.encode(r), "where") == r
    assert r.node == "h1_6700_JMAP_DUMP"
    for junk in (b"", b"{}", b"[1]", b'{"host":"h","port":1,"action":"X","time_stamp":1}'):
        with pytest.raises(pr.ProfileRequestError, match="where"):
            pr.decode(junk, "where")


def test_a_profiler_is_pending_until_its_stop_time_other_actions_until_the_grace():
    stop = req("JPROFILE_STOP", NOW + 10)
    assert pr.listed(stop, NOW + 9) and not pr.listed(stop, NOW + 10)
    assert not pr.garbage(stop, NOW + 10)  # its worker still has to stop and dump
    assert pr.garbage(stop, NOW + 10 + pr.GRACE_MS)
    dump = req("JSTACK_DUMP", NOW)
    assert pr.listed(dump, NOW + pr.GRACE_MS - 1)
    assert not pr.listed(dump, NOW + pr.GRACE_MS) and pr.garbage(dump, NOW + pr.GRACE_MS)


def test_pending_is_the_newest_per_worker_of_the_component_and_action():
    requests = [
        req("JPROFILE_STOP", NOW + 10),
        req("JPROFILE_STOP", NOW + 20),
        req("JPROFILE_STOP", NOW + 30, port=6701),
        req("JPROFILE_STOP", NOW + 30, host="elsewhere"),
        req("JSTACK_DUMP", NOW),
        req("JPROFILE_STOP", NOW - 1, port=6702),  # expired
    ]
    slots = {("h1", 6700), ("h1", 6701), ("h1", 6702)}
    assert pr.pending(requests, slots, "JPROFILE_STOP", NOW) == [
        req("JPROFILE_STOP", NOW + 20),
        req("JPROFILE_STOP", NOW + 30, port=6701),
    ]
    assert pr.pending(requests, slots, "JSTACK_DUMP", NOW) == [req("JSTACK_DUMP", NOW)]
    assert pr.pending(requests, set(), "JSTACK_DUMP", NOW) == []


def test_a_worker_takes_its_own_live_requests_oldest_first():
    requests = [
        req("JSTACK_DUMP", NOW + 5),
        req("JMAP_DUMP", NOW),
        req("JSTACK_DUMP", NOW, port=6701),
        req("JVM_RESTART", NOW - pr.GRACE_MS),  # garbage: never acted on
        req("JMAP_DUMP", NOW, host="sup-1"),
    ]
    mine = pr.for_worker(requests, {"h1", "sup-1"}, 6700, NOW)
    assert mine == [
        req("JMAP_DUMP", NOW),
        req("JMAP_DUMP", NOW, host="sup-1"),
        req("JSTACK_DUMP", NOW + 5),
    ]
