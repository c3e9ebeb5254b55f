"""Storm UI REST parity (issue #34 item 7), the pure parts: bolts' input stats, capacities
from the supervisors, JSONP's callback check and wrapping, string executor counts, the
per-stream /topology/:id/metrics body, owner and history bodies, profiling requests."""

import dataclasses

import pytest

from squall import thrift_api as T
from squall.nimbus.reads.page_info import component_page, topology_page
from squall.nimbus.reads.summaries import cluster_summary, topology_info
from squall.records import SupervisorInfo
from squall.ui import (
    cluster_json,
    component_json,
    jsonp,
    log_files,
    profiling,
    topology_json,
    topology_metrics_json,
)
from squall.ui.app import _count, _rebalance_options
from squall.ui.topology_json import BadRequest

from .test_page_info import ASSIGNMENT, BASE, BEATS, FACTS, NOW, TASKS
from .test_window_stats import FACTS as WINDOWED


def test_a_bolt_with_one_input_has_its_figures_under_it():
    facts = dataclasses.replace(FACTS, inputs={"sink": (("numbers", "default"),)})
    page = component_page(facts, "sink", include_sys=False, now=NOW)
    ((key, stats),) = page.gsid_to_input_stats.items()
    assert (key.componentId, key.streamId) == ("numbers", "default")
    assert stats.specific_stats.bolt.executed == 15  # 12 + 3 over its two tasks
    (row,) = component_json.component_page(page, ":all-time", NOW)["inputStats"]
    assert row["component"] == "numbers" and row["stream"] == "default"
    assert row["executed"] == 15 and row["acked"] == 0 and row["failed"] == 0


def test_a_bolt_with_several_inputs_lists_them_unmeasured():
    inputs = (("numbers", "default"), ("numbers", "odd"), ("numbers", "default"))
    facts = dataclasses.replace(FACTS, inputs={"sink": inputs})
    page = component_page(facts, "sink", include_sys=False, now=NOW)
    rows = component_json.component_page(page, ":all-time", NOW)["inputStats"]
    assert [(r["component"], r["stream"]) for r in rows] == [
        ("numbers", "default"),
        ("numbers", "odd"),
    ]
    assert {r["executed"] for r in rows} == {None}  # not a made-up split
    spout = component_page(facts, "numbers", include_sys=False, now=NOW)
    assert "inputStats" not in component_json.component_page(spout, ":all-time", NOW)


def _supervisors():
    return {
        "a": SupervisorInfo("host-a", [6700], NOW - 5, "1", 4096.0, 400.0),
        "b": SupervisorInfo("host-b", [6700], NOW - 5, "1", 2048.0, 100.0),
    }


def test_capacities_come_from_the_supervisors_and_used_from_placed_tasks():
    base = dataclasses.replace(BASE, component_resources={"sink": (256.0, 50.0)})
    assignment = dataclasses.replace(
        ASSIGNMENT,
        task_slots={
            t: (("a" if s[0] == "sup-a" else "b"), s[1]) for t, s in ASSIGNMENT.task_slots.items()
        },
    )
    summary = cluster_summary({"t": base}, {"t": assignment}, {"t": TASKS}, _supervisors(), [], NOW)
    body = cluster_json.cluster_summary(summary)
    assert (body["totalMem"], body["totalCpu"]) == (6144.0, 500.0)
    # sink's tasks 4 (on a) and 5 (on b): 256 MB and 50 % each
    assert (body["availMem"], body["availCpu"]) == (6144.0 - 512, 400.0)
    assert body["memAssignedPercentUtil"] == pytest.approx(100 * 512 / 6144)
    rows = {s["id"]: s for s in cluster_json.supervisor_summary(summary.supervisors)["supervisors"]}
    assert (rows["a"]["totalMem"], rows["a"]["totalCpu"]) == (4096.0, 400.0)
    assert (rows["a"]["usedMem"], rows["a"]["usedCpu"]) == (256.0, 50.0)
    assert rows["b"]["availMem"] == 2048.0 - 256


def test_jsonp_callback_names_are_checked():
    same = {"sec-fetch-site": "same-origin"}
    assert jsonp.callback({}, {}) is None
    assert jsonp.callback({"callback": "jQuery_1.cb$"}, {}) == "jQuery_1.cb$"
    assert jsonp.callback({"callback": "cb"}, same) == "cb"
    for bad in ("alert(1)//", "a b", "1a", "a..b", "", "x" * 129, "cb;evil", "<script>"):
        with pytest.raises(BadRequest, match="callback"):
            jsonp.callback({"callback": bad}, {})
    with pytest.raises(jsonp.CrossSite):
        jsonp.callback({"callback": "cb"}, {"sec-fetch-site": "cross-site"})
    assert jsonp.wrap("cb", b'{"a": 1}') == b'cb({"a": 1});'


def test_executor_counts_may_be_strings_of_digits():
    assert _count("5", "x") == 5 and _count(5, "x") == 5
    for bad in ("2.7", "0", " 5", "-1", "five", True, 2.0, "99999999999"):
        with pytest.raises(BadRequest):
            _count(bad, "x")
    body = b'{"rebalanceOptions": {"numWorkers": "2", "executors": {"spout": "5"}}}'
    options = _rebalance_options(body, 0)
    assert (options.num_workers, options.num_executors) == (2, {"spout": 5})


def test_topology_metrics_per_stream_for_the_window():
    info = topology_info(
        "t",
        BASE,
        ASSIGNMENT,
        TASKS,
        BEATS,
        {},
        NOW,
        spouts=frozenset({"numbers"}),
        sole_inputs={"sink": ("numbers", "default")},
    )
    body = topology_metrics_json.topology_metrics(info, ":all-time", include_sys=False)
    assert (body["window"], body["windowHint"]) == (":all-time", "All time")
    (spout,) = body["spouts"]
    assert spout["id"] == "numbers"
    assert spout["emitted"] == [{"stream_id": "default", "value": 15}]
    assert spout["acked"] == [{"stream_id": "default", "value": 14}]
    assert spout["failed"] == [{"stream_id": "default", "value": 1}]
    (bolt,) = body["bolts"]
    assert bolt["executed"] == [{"component_id": "numbers", "stream_id": "default", "value": 15}]
    with_sys = topology_metrics_json.topology_metrics(info, ":all-time", include_sys=True)
    assert "__acker" in [b["id"] for b in with_sys["bolts"]]
    empty = topology_metrics_json.topology_metrics(info, "600", include_sys=False)
    assert empty["spouts"][0]["emitted"] == []  # the beats carry no 10-minute window


def test_owner_history_and_workers_bodies():
    owner = T.OwnerResourceSummary(owner="alice", total_topologies=1, total_executors=4)
    body = cluster_json.owner_resources([owner])
    (row,) = body["owners"]
    assert (row["owner"], row["totalTopologies"], row["memoryGuarantee"]) == ("alice", 1, "N/A")
    alone = cluster_json.owner_resource("nobody", [], [])
    assert alone["owner"] == "nobody" and alone["totalTopologies"] == 0
    history = cluster_json.history_summary(T.TopologyHistoryInfo(topo_ids=["a-1", "b-2"]))
    assert history == {"topo-history": ["a-1", "b-2"]}
    executors = [
        T.ExecutorSummary(
            host="h", port=2, component_id="c", uptime_secs=1, executor_info=T.ExecutorInfo(1, 1)
        ),
        T.ExecutorSummary(
            host="h", port=2, component_id="d", uptime_secs=1, executor_info=T.ExecutorInfo(2, 2)
        ),
        T.ExecutorSummary(
            host="g", port=1, component_id="d", uptime_secs=1, executor_info=T.ExecutorInfo(3, 3)
        ),
    ]
    workers = cluster_json.topology_workers(executors, None)["hostPortList"]
    assert workers == [{"host": "g", "port": 1}, {"host": "h", "port": 2}]


def test_profiling_requests_as_storms_ui_makes_them():
    start = profiling.ask("start", "10.0.0.7:6701", "10", now=100.0)
    assert start.request.action == T.ProfileAction.JPROFILE_STOP
    assert start.request.time_stamp == 100_000 + 600_000
    assert (start.request.nodeInfo.node, start.request.nodeInfo.port) == ("10.0.0.7", {6701})
    assert start.answer == {"status": "ok", "id": "10.0.0.7:6701", "timeout": "10", "dumplink": ""}
    assert profiling.ask("stop", "h:1", None, 100.0).request.time_stamp == 0
    heap = profiling.ask("dumpheap", "[::1]:6700", None, 100.0).request
    assert (heap.action, heap.nodeInfo.node, heap.time_stamp) == (
        T.ProfileAction.JMAP_DUMP,
        "[::1]",
        100_000,
    )
    for bad in ("h", "h:", ":1", "h:0", "h:99999", "h:1x"):
        with pytest.raises(BadRequest):
            profiling.ask("dumpjstack", bad, None, 1.0)
    for timeout in ("0", "x", "99999999"):
        with pytest.raises(BadRequest):
            profiling.ask("start", "h:1", timeout, 1.0)


def test_log_file_names_are_storms_and_reach_only_worker_files():
    f = log_files.parse_file("words-1-2/6700/worker.log")
    assert (f.topology_id, f.port, f.disk_name) == ("words-1-2", 6700, "worker-words-1-2-6700.log")
    assert log_files.parse_file("t/1/worker.log.2").disk_name == "worker-t-1.log.2"
    assert log_files.parse_file("t/1/jstack-17.txt").disk_name == "worker-t-1-jstack-17.txt"
    for bad in (
        None,
        "",
        "../etc/6700/worker.log",
        "a/../b/6700/worker.log",
        "t/6700/../../x",
        "t/6700/nimbus.log",
        "t/port/worker.log",
        "/t/6700/worker.log",
        "t..x/6700/worker.log",
    ):
        with pytest.raises(BadRequest, match="file"):
            log_files.parse_file(bad)
    names = ["worker-t-1-6700.log", "worker-t-1-6700.log.1", "worker-t-1-6701.log"]
    names += ["worker-t-1-6700-heap-5.txt", "worker-t-10-6700.log", "other.log"]
    assert log_files.files_of(names, "t-1", 6700) == [
        "t-1/6700/heap-5.txt",
        "t-1/6700/worker.log",
        "t-1/6700/worker.log.1",
    ]
    assert len(log_files.files_of(names, "t-1", None)) == 4


def test_log_pages_default_to_the_tail_and_search_finds_matches():
    assert log_files.byte_range(100_000, None, None) == (100_000 - 51200, 51200)
    assert log_files.byte_range(10, None, None) == (0, 10)
    assert log_files.byte_range(10, "4", "3") == (4, 3)
    assert log_files.byte_range(10, "40", None) == (10, 0)
    with pytest.raises(BadRequest, match="start"):
        log_files.byte_range(10, "-1", None)
    data = b"one ERROR two\nthree ERROR four\n"
    file = log_files.parse_file("t/1/worker.log")
    ask = log_files.search_ask({"search-string": "ERROR", "num-matches": "1"})
    found = log_files.search(data, ask, file, "/api/v1/log?file=t%2F1%2Fworker.log")
    (match,) = found["matches"]
    assert (match["byteOffset"], match["beforeString"], match["afterString"][:4]) == (
        4,
        "one ",
        " two",
    )
    assert found["nextByteOffset"] == 9
    rest = log_files.search(data, log_files.SearchAsk(b"ERROR", 10, 9), file, "/l?f")
    assert [m["byteOffset"] for m in rest["matches"]] == [20] and rest["nextByteOffset"] is None
    with pytest.raises(BadRequest, match="search-string"):
        log_files.search_ask({})


def test_log_links_name_the_workers_host_with_this_uis_port():
    local = log_files.LogLinks.from_conf({"ui.host": "127.0.0.1", "ui.port": 8080})
    assert local.worker("127.0.0.1", 6700, "t-1") == (
        "http://127.0.0.1:8080/api/v1/log?file=t-1%2F6700%2Fworker.log"
    )
    remote = log_files.LogLinks.from_conf({"ui.host": "0.0.0.0", "ui.port": 8443})
    assert remote.worker("node-2", 6701, "t").startswith("https://node-2:8443/api/v1/log?")
    assert remote.worker("::1", 1, "t").startswith("https://[::1]:8443/")
    assert remote.worker("", 6701, "t") == "" and remote.worker("h", 0, "t") == ""


def test_windows_change_the_figures_the_ui_serves():
    facts = dataclasses.replace(WINDOWED, inputs={"count": (("words", "default"),)})
    ten = topology_json.topology_page(topology_page(facts, False, NOW, "600"), "600", NOW)
    ever = topology_json.topology_page(topology_page(facts, False, NOW), ":all-time", NOW)
    assert (ten["window"], ten["windowHint"]) == ("600", "10m 0s")
    assert (ten["spouts"][0]["acked"], ever["spouts"][0]["acked"]) == (4, 40)
    assert (ten["bolts"][0]["executed"], ever["bolts"][0]["executed"]) == (5, 50)
    rows = {s["window"]: s for s in ten["topologyStats"]}
    assert list(rows) == ["600", "10800", "86400", ":all-time"]
    assert (rows["600"]["acked"], rows[":all-time"]["acked"]) == (4, 40)

    def executed(window):
        page = component_page(facts, "count", False, NOW, window)
        return component_json.component_page(page, window, NOW)["inputStats"][0]["executed"]

    assert (executed("600"), executed(":all-time")) == (5, 50)


def test_dump_links_and_active_profilers():
    links = log_files.LogLinks.from_conf({"ui.host": "127.0.0.1", "ui.port": 8080})
    assert links.dumps("h", 6700, "t-1") == "http://h:8080/api/v1/dumps/t-1/h%3A6700"
    files = log_files.files_of(
        ["worker-t-6700.log", "worker-t-6700-jstack-5.txt", "worker-t-6700-heap-6.txt"], "t", 6700
    )
    assert log_files.dump_names(files) == ["heap-6.txt", "jstack-5.txt"]
    request = T.ProfileRequest(
        nodeInfo=T.NodeInfo(node="h", port={6700}),
        action=T.ProfileAction.JPROFILE_STOP,
        time_stamp=160_000,
    )
    (row,) = profiling.active([request], links, "t-1", now=100.0)
    assert row == {
        "host": "h",
        "port": "6700",
        "dumplink": "http://h:8080/api/v1/dumps/t-1/h%3A6700",
        "timestamp": -60_000,
    }


def test_topology_summaries_name_their_owner():
    t = T.TopologySummary(
        id="t-1",
        name="t",
        num_tasks=1,
        num_executors=1,
        num_workers=1,
        uptime_secs=5,
        status="ACTIVE",
        owner="alice",
        sched_status="Fully Scheduled",
    )
    row = cluster_json.topology_summary_json(t)
    assert (row["owner"], row["schedulerInfo"]) == ("alice", "Fully Scheduled")
    (mine,) = cluster_json.owner_resource(
        "alice", [T.OwnerResourceSummary(owner="alice", total_topologies=1)], [t]
    )["topologies"]
    assert mine["id"] == "t-1"
    assert (
        cluster_json.owner_resource("bob", [T.OwnerResourceSummary(owner="bob")], [t])["topologies"]
        == []
    )
