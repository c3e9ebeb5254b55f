"""`squall ui` (issue #13) as a real process over real HTTP against a real local cluster: the
Storm UI REST API v1 checked field by field against Storm's documented names and types,
Storm's error JSON with a 4xx for bad requests, 503 when nimbus is down, /metrics parsed by
prometheus_client's parser, and what the UI must refuse (CSRF, foreign Host headers, and on a
non-loopback address: strangers without a certificate, readers acting)."""

import json
import socket
import ssl
import subprocess
import sys
import time
from urllib.parse import quote

import httpx
import pytest
import yaml
from prometheus_client.parser import text_string_to_metric_families

from squall.local import LocalCluster, topology_id, wait_for
from squall.processes import terminate
from squall.security.certificates import issue
from squall.submit import submit_file
from squall.ui.connections import HEADER_SECS
from squall.zk.server import free_port

from .conftest import TOPOLOGIES

WORDS = TOPOLOGIES / "ui_words.py"
STR, INT, FLOAT, BOOL = str, int, float, bool
OPT_STR = (str, type(None))
OPT_INT = (int, type(None))


@pytest.fixture(scope="module")
def cluster(tmp_path_factory):
    # the CPU through supervisor.resources.map under Storm's normalized name, which
    # overrides supervisor.cpu.capacity (400 by default) as in Storm
    capacity = {
        "supervisor.memory.capacity.mb": 3072,
        "supervisor.resources.map": {"cpu.pcore.percent": 300},
    }
    with LocalCluster(
        tmp_path_factory.mktemp("ui"), supervisors=1, ui=True, supervisor_confs={1: capacity}
    ) as c:
        for name in ("bob", "carol"):
            issue(c.base_conf_full(), name)
        yield c


@pytest.fixture(scope="module")
def words(cluster):
    """The never-ending word count, running, with acked tuple trees."""
    with cluster.client() as client:
        submit_file(client, WORDS, cluster.client_conf(), name="words")
        tid = topology_id(client, "words")
    wait_for(lambda: get(cluster, f"/topology/{tid}").json()["spouts"][0]["acked"], 120, "acks")
    return tid


def get(cluster, path: str, headers: dict | None = None, **kwargs) -> httpx.Response:
    headers = {**cluster.ui_headers(), **(headers or {})}
    return httpx.get(cluster.ui_url + "/api/v1" + path, timeout=30, headers=headers, **kwargs)


def post(cluster, path: str, headers: dict | None = None, **kwargs) -> httpx.Response:
    headers = {**cluster.ui_headers(), **(headers or {})}
    return httpx.post(cluster.ui_url + "/api/v1" + path, timeout=30, headers=headers, **kwargs)


def check(obj: dict, types: dict) -> None:
    """Every documented field is there with its documented type."""
    for field, kind in types.items():
        assert field in obj, f"missing {field} in {sorted(obj)}"
        assert isinstance(obj[field], kind), f"{field}: {obj[field]!r} is not {kind}"
        if kind is INT:
            assert not isinstance(obj[field], bool), field


def storm_error(response: httpx.Response, status: int, text: str) -> None:
    assert response.status_code == status, response.text
    body = response.json()
    assert body["error"].startswith(str(status)), body
    assert text in body["errorMessage"], body
    assert "Traceback" not in response.text


def test_cluster_reads(cluster, words):
    summary = get(cluster, "/cluster/summary").json()
    check(
        summary,
        {"stormVersion": STR, "supervisors": INT, "topologies": INT, "slotsTotal": INT}
        | {"slotsUsed": INT, "slotsFree": INT, "executorsTotal": INT, "tasksTotal": INT}
        | {"schedulerDisplayResource": BOOL, "totalMem": FLOAT, "availCpu": FLOAT},
    )
    assert (summary["supervisors"], summary["topologies"], summary["slotsTotal"]) == (1, 1, 4)
    assert summary["slotsUsed"] == 1 and summary["slotsFree"] == 3
    assert summary["executorsTotal"] == summary["tasksTotal"] == 5  # no acker: spouts track
    assert summary["stormVersion"].startswith("2.8.8+squall.")

    [nimbus] = get(cluster, "/nimbus/summary").json()["nimbuses"]
    check(nimbus, {"host": STR, "port": INT, "status": STR, "version": STR})
    check(nimbus, {"nimbusUpTime": STR, "nimbusUpTimeSeconds": STR, "nimbusLogLink": STR})
    assert (nimbus["port"], nimbus["status"]) == (cluster.nimbus_port, "Leader")

    body = get(cluster, "/supervisor/summary").json()
    [sup] = body["supervisors"]
    check(sup, {"id": STR, "host": STR, "uptime": STR, "uptimeSeconds": INT, "slotsTotal": INT})
    check(sup, {"slotsUsed": INT, "totalMem": FLOAT, "totalCpu": FLOAT, "usedMem": FLOAT})
    assert (sup["id"], sup["slotsTotal"], sup["slotsUsed"]) == ("supervisor1", 4, 1)
    assert sup["sparkConnect"] == "off"  # squall's field; this cluster's conf starts no Spark
    assert body["schedulerDisplayResource"] is False

    [topo] = get(cluster, "/topology/summary").json()["topologies"]
    check(topo, {"id": STR, "name": STR, "status": STR, "uptime": STR, "uptimeSeconds": INT})
    check(topo, {"tasksTotal": INT, "workersTotal": INT, "executorsTotal": INT})
    check(topo, {"replicationCount": INT, "requestedMemOnHeap": FLOAT, "assignedCpu": FLOAT})
    assert (topo["id"], topo["name"], topo["status"], topo["workersTotal"]) == (
        words,
        "words",
        "ACTIVE",
        1,
    )

    conf = get(cluster, "/cluster/configuration").json()
    assert conf["nimbus.seeds"] == [f"127.0.0.1:{cluster.nimbus_port}"]
    assert conf["ui.port"] == 8080  # nimbus's conf: the UI's port is its own


def test_topology_page(cluster, words):
    page = get(cluster, f"/topology/{words}").json()
    check(
        page,
        {"id": STR, "name": STR, "uptime": STR, "uptimeSeconds": INT, "status": STR}
        | {"tasksTotal": INT, "workersTotal": INT, "executorsTotal": INT, "msgTimeout": INT}
        | {"windowHint": STR, "schedulerDisplayResource": BOOL, "replicationCount": INT}
        | {"debug": BOOL, "samplingPct": FLOAT, "topologyStats": list, "workers": list}
        | {"spouts": list, "bolts": list, "configuration": dict, "assignedMemOnHeap": FLOAT},
    )
    assert (page["name"], page["status"], page["msgTimeout"]) == ("words", "ACTIVE", 30)
    windows = {stats["window"]: stats for stats in page["topologyStats"]}
    assert list(windows) == ["600", "10800", "86400", ":all-time"]
    for stats in windows.values():
        check(stats, {"windowPretty": STR, "window": STR, "emitted": INT, "transferred": INT})
        check(stats, {"completeLatency": OPT_STR, "acked": INT, "failed": INT})
    stats = windows[":all-time"]
    assert stats["emitted"] > 0 and stats["acked"] > 0
    for key in ("emitted", "transferred", "acked", "failed"):  # one read: the same beats
        assert 0 <= windows["600"][key] <= windows["10800"][key] <= stats[key], key

    [spout] = page["spouts"]
    check(
        spout,
        {"spoutId": STR, "executors": INT, "tasks": INT, "emitted": INT, "transferred": INT}
        | {"completeLatency": OPT_STR, "acked": INT, "failed": INT, "lastError": STR}
        | {"errorHost": STR, "errorPort": OPT_INT, "errorTime": OPT_INT}
        | {"errorLapsedSecs": OPT_INT, "errorWorkerLogLink": STR, "requestedCpu": FLOAT},
    )
    assert (spout["spoutId"], spout["executors"], spout["tasks"]) == ("sentences", 1, 1)
    bolts = {b["boltId"]: b for b in page["bolts"]}
    assert set(bolts) == {"split", "count"}  # the acker is a system component: ?sys=1
    for bolt in bolts.values():
        check(
            bolt,
            {"boltId": STR, "capacity": OPT_STR, "processLatency": OPT_STR}
            | {"executeLatency": OPT_STR, "executors": INT, "tasks": INT, "acked": INT}
            | {"failed": INT, "lastError": STR, "emitted": INT, "executed": INT},
        )
        assert bolt["executors"] == 2 and bolt["executed"] > 0
        # measured by the workers: time in execute, its share of the time, ack latency
        assert float(bolt["executeLatency"]) > 0 and 0 <= float(bolt["capacity"]) <= 1
        assert float(bolt["processLatency"]) >= float(bolt["executeLatency"])
        assert bolt["acked"] == bolt["executed"] and bolt["failed"] == 0
    assert bolts["count"]["emitted"] == 0 and bolts["split"]["emitted"] > 0
    [worker] = page["workers"]
    check(worker, {"supervisorId": STR, "host": STR, "port": INT, "topologyId": STR})
    check(worker, {"executorsTotal": INT, "componentNumTasks": dict, "uptimeSeconds": INT})
    assert worker["componentNumTasks"] == {"sentences": 1, "split": 2, "count": 2}

    with_sys = get(cluster, f"/topology/{words}", params={"sys": "1"}).json()
    assert {b["boltId"] for b in with_sys["bolts"]} == {"split", "count"}  # no __acker runs

    # the last 10 minutes: never more than all-time, read after it (counters only grow)
    ten = get(cluster, f"/topology/{words}", params={"window": "600"}).json()
    assert (ten["window"], ten["windowHint"]) == ("600", "10m 0s")
    later = get(cluster, f"/topology/{words}").json()
    for kind, key in (("spouts", "spoutId"), ("bolts", "boltId")):
        recent = {c[key]: c for c in ten[kind]}
        for c in later[kind]:
            assert recent[c[key]]["emitted" if kind == "spouts" else "executed"] > 0
            assert (
                recent[c[key]]["acked"] <= c["acked"] and recent[c[key]]["emitted"] <= c["emitted"]
            )


def test_component_pages(cluster, words):
    spout = get(cluster, f"/topology/{words}/component/sentences").json()
    check(
        spout,
        {"user": STR, "id": STR, "encodedId": STR, "name": STR, "executors": INT, "tasks": INT}
        | {"topologyId": STR, "topologyStatus": STR, "window": STR, "componentType": STR}
        | {"windowHint": STR, "debug": BOOL, "componentErrors": list, "spoutSummary": list}
        | {"outputStats": list, "executorStats": list, "profilingAndDebuggingCapable": BOOL},
    )
    assert (spout["user"], spout["componentType"], spout["topologyId"]) == (
        "admin",
        "spout",
        words,
    )
    assert [w["window"] for w in spout["spoutSummary"]] == ["600", "10800", "86400", ":all-time"]
    for summary in spout["spoutSummary"]:
        check(summary, {"windowPretty": STR, "window": STR, "emitted": INT, "acked": INT})
    [out] = spout["outputStats"]
    check(out, {"stream": STR, "emitted": INT, "transferred": INT})
    assert out["stream"] == "default"
    [executor] = spout["executorStats"]
    check(executor, {"id": STR, "host": STR, "port": INT, "uptimeSeconds": INT, "emitted": INT})

    bolt = get(cluster, f"/topology/{words}/component/count").json()
    assert bolt["componentType"] == "bolt" and "boltStats" in bolt and "spoutSummary" not in bolt
    check(bolt["boltStats"][0], {"executed": INT, "acked": INT, "processLatency": OPT_STR})
    ten, *_, ever = bolt["boltStats"]
    assert (ten["window"], ever["window"]) == ("600", ":all-time")
    assert 0 < ten["executed"] <= ever["executed"] and float(ever["capacity"]) >= 0
    assert len(bolt["executorStats"]) == 2
    [given] = bolt["inputStats"]  # count's one input: split's default stream
    check(given, {"component": STR, "encodedComponentId": STR, "stream": STR, "executed": INT})
    check(given, {"executeLatency": OPT_STR, "processLatency": OPT_STR, "acked": INT})
    assert (given["component"], given["stream"]) == ("split", "default")
    assert given["executed"] > 0 and float(given["executeLatency"]) > 0
    [given] = get(cluster, f"/topology/{words}/component/split").json()["inputStats"]
    assert (given["component"], given["stream"]) == ("sentences", "default")
    assert given["executed"] > 0


def test_visualization(cluster, words):
    viz = get(cluster, f"/topology/{words}/visualization").json()
    assert set(viz) == {"sentences", "split", "count"}
    assert viz["sentences"][":type"] == "spout" and viz["sentences"][":inputs"] == []
    [edge] = viz["count"][":inputs"]
    assert (edge[":component"], edge[":stream"], edge[":grouping"]) == (
        "split",
        "default",
        "fields",
    )
    assert viz["split"][":inputs"][0][":grouping"] == "shuffle"
    assert viz["split"][":transferred"] > 0


def test_errors_are_storm_error_json(cluster, words):
    storm_error(get(cluster, "/topology/nope-1-1"), 404, "nope-1-1")
    storm_error(get(cluster, f"/topology/{words}/component/nope"), 404, "nope")
    storm_error(get(cluster, f"/topology/{words}", params={"window": "7"}), 400, "window")
    storm_error(get(cluster, f"/topology/{words}", params={"sys": "x"}), 400, "sys")
    storm_error(post(cluster, f"/topology/{words}/kill/soon"), 400, "wait-time")
    storm_error(post(cluster, "/topology/nope-1-1/kill/0"), 404, "nope-1-1")
    storm_error(post(cluster, f"/topology/{words}/rebalance/0", content=b"{["), 400, "rebalance")
    storm_error(get(cluster, "/no/such/call"), 404, "no such API path")
    assert post(cluster, "/cluster/summary").status_code == 405
    huge = b"{" + b" " * (128 * 1024) + b"}"  # read up to 64 KiB, then refused
    storm_error(post(cluster, f"/topology/{words}/rebalance/0", content=huge), 413, "at most")
    # each of these was a 500 with a stack trace
    storm_error(post(cluster, f"/topology/{words}/kill/%C2%B2"), 400, "wait-time")  # "²"
    storm_error(post(cluster, f"/topology/{words}/kill/" + "9" * 4301), 400, "wait-time")
    rebalance = f"/topology/{words}/rebalance/0"
    for options, what in [
        (b'{"rebalanceOptions": {"numWorkers": 1e400}}', "numWorkers"),
        (b'{"rebalanceOptions": {"numWorkers": 4294967296}}', "numWorkers"),
        (b'{"rebalanceOptions": {"numWorkers": true}}', "numWorkers"),
        (b'{"rebalanceOptions": {"executors": {"count": 2.7}}}', "executors"),
        (b'{"rebalanceOptions": [1]}', "rebalanceOptions"),
        (b"[" * 60000, "rebalanceOptions"),
    ]:
        storm_error(post(cluster, rebalance, content=options), 400, what)
    assert get(cluster, f"/topology/{words}").json()["status"] == "ACTIVE"


def test_deactivate_and_activate(cluster, words):
    def status() -> str:
        return get(cluster, f"/topology/{words}").json()["status"]

    answer = post(cluster, f"/topology/{words}/deactivate")
    assert answer.json() == {
        "topologyOperation": "deactivate",
        "topologyId": words,
        "status": "success",
    }
    wait_for(lambda: status() == "INACTIVE", 30, "deactivation")
    assert post(cluster, f"/topology/{words}/activate").status_code == 200
    wait_for(lambda: status() == "ACTIVE", 30, "activation")


def test_refuses_cross_site_posts_and_foreign_hosts(cluster, words):
    evil = {"Origin": "http://evil.example"}
    storm_error(post(cluster, f"/topology/{words}/kill/0", headers=evil), 403, "another site")
    odd = {"Origin": "http://[x]"}  # does not parse: another site, not a 500
    storm_error(post(cluster, f"/topology/{words}/kill/0", headers=odd), 403, "another site")
    storm_error(get(cluster, "/cluster/summary", headers={"Host": "evil.example"}), 400, "Host")
    storm_error(get(cluster, "/cluster/summary", headers={"Host": "["}), 400, "Host")
    page = get(cluster, "/cluster/summary")  # no other site may frame the UI (a lured Kill)
    assert page.headers["x-frame-options"] == "DENY"
    assert "frame-ancestors 'none'" in page.headers["content-security-policy"]
    assert get(cluster, f"/topology/{words}").json()["status"] == "ACTIVE"
    same = {"Origin": cluster.ui_url}
    assert post(cluster, f"/topology/{words}/activate", headers=same).status_code == 200


def test_metrics(cluster, words):
    text = httpx.get(cluster.ui_url + "/metrics", timeout=30, headers=cluster.ui_headers()).text
    families = {f.name: f for f in text_string_to_metric_families(text)}
    assert families["squall_component_emitted"].type == "counter"
    samples = {(s.name, s.labels.get("component")): s for f in families.values() for s in f.samples}
    emitted = samples[("squall_component_emitted_total", "sentences")]
    assert emitted.labels == {
        "topology_id": words,
        "topology": "words",
        "component": "sentences",
        "type": "spout",
    }
    assert emitted.value > 0
    assert samples[("squall_component_acked_total", "sentences")].value > 0
    assert samples[("squall_bolt_executed_total", "count")].value > 0
    assert samples[("squall_bolt_execute_latency_seconds", "count")].value > 0
    assert 0 <= samples[("squall_bolt_capacity", "count")].value <= 1
    assert samples[("squall_supervisors", None)].value == 1
    assert samples[("squall_slots_used", None)].value == 1
    assert families["squall_topology_info"].samples[0].labels["status"] in ("ACTIVE", "INACTIVE")


def test_a_loopback_ui_wants_its_token(cluster, words):
    """Plain HTTP on loopback, but every API request carries the UI's token: the host's
    other users, who cannot read security.dir, can neither read nor act. The page's own
    files are served bare (a browser's navigation carries no header); the address `squall
    ui` prints (?token=) is checked and left to the page's script, which keeps the token in
    its origin's localStorage. No cookie: a browser would send it to any server on
    127.0.0.1, whatever its port."""
    ui = cluster.ui_url
    for method, path in [("GET", "/api/v1/cluster/summary"), ("GET", "/metrics")]:
        storm_error(httpx.request(method, ui + path, timeout=30), 401, "token")
    kill = f"/api/v1/topology/{words}/kill/0"
    storm_error(httpx.post(ui + kill, timeout=30), 401, "token")
    wrong = {"Authorization": "Bearer not-the-token"}
    storm_error(httpx.post(ui + kill, timeout=30, headers=wrong), 401, "token")
    storm_error(httpx.get(ui + "/?token=not-the-token", timeout=30), 401, "token")
    assert get(cluster, f"/topology/{words}").json()["status"] == "ACTIVE"

    assert cluster.ui_address.startswith(ui + "/?token=")
    token = cluster.ui_address.split("?token=")[1]
    landing = httpx.get(cluster.ui_address, timeout=30)
    assert landing.status_code == 200 and "set-cookie" not in landing.headers
    assert landing.headers["referrer-policy"] == "no-referrer"
    assert httpx.get(ui + "/", timeout=30).status_code == 200  # the page, nothing secret
    as_cookie = {"Cookie": f"squall_ui_token={token}"}
    summary = httpx.get(ui + "/api/v1/cluster/summary", timeout=30, headers=as_cookie)
    storm_error(summary, 401, "token")  # a cookie is no credential
    summary = httpx.get(ui + f"/api/v1/cluster/summary?token={token}", timeout=30)
    assert summary.status_code == 200 and summary.json()["supervisors"] == 1


def test_idle_and_half_sent_connections_never_lock_out_a_token_holder(cluster, words):
    """1,000 connections from a local stranger, idle or stopped part-way through a request
    head, while the token holder asks: every answer comes within a second (the UI closes
    the strangers' oldest unproven connections, never a token holder's), and a half-sent
    head is cut at the header deadline (squall/ui/connections.py)."""
    host, port = "127.0.0.1", cluster.ui_port
    assert get(cluster, "/cluster/summary").status_code == 200  # nimbus's link is warm
    strangers: list[socket.socket] = []
    try:
        for i in range(1000):
            s = socket.create_connection((host, port), timeout=30)
            if i % 2:
                s.sendall(b"GET /api/v1/cluster/summary HTTP/1.1\r\nHost: 127.0.0.1\r\n")
            strangers.append(s)
        for _ in range(3):  # a fresh connection each time, as a browser's next poll
            with httpx.Client(timeout=1.0, headers=cluster.ui_headers()) as holder:
                answer = holder.get(cluster.ui_url + "/api/v1/cluster/summary")
            assert answer.status_code == 200 and answer.json()["supervisors"] == 1
        late = strangers[-1]  # half-sent, and among the newest: kept until its deadline
        late.settimeout(HEADER_SECS + 30)
        assert late.recv(1) == b""  # closed by the UI, not by the test's timeout
    finally:
        for s in strangers:
            s.close()


def _histograms(cluster) -> dict:
    """(family, component) -> {"buckets": [(le, value)...], "count", "sum"} of one scrape."""
    text = httpx.get(cluster.ui_url + "/metrics", timeout=30, headers=cluster.ui_headers()).text
    out: dict = {}
    for family in text_string_to_metric_families(text):
        if family.type != "histogram":
            continue
        for s in family.samples:
            entry = out.setdefault(
                (family.name, s.labels["component"]), {"buckets": [], "count": 0, "sum": 0}
            )
            if s.name.endswith("_bucket"):
                entry["buckets"].append((s.labels["le"], s.value))
            else:
                entry[s.name.rsplit("_", 1)[1]] = s.value
    return out


def test_metrics_latency_histograms(cluster, words):
    """A running topology's latencies as Prometheus histograms: cumulative buckets ending in
    +Inf == _count, and _count grows between two scrapes (they never reset)."""
    wanted = [
        ("squall_component_complete_latency_seconds", "sentences"),
        ("squall_component_execute_latency_seconds", "split"),
        ("squall_component_process_latency_seconds", "split"),
        ("squall_component_execute_latency_seconds", "count"),
    ]

    def counted() -> dict | None:
        scrape = _histograms(cluster)
        return scrape if all(scrape.get(k, {}).get("count") for k in wanted) else None

    first = wait_for(counted, 60, "histograms with counts", interval=0.5)
    for key in wanted:
        entry = first[key]
        values = [value for _, value in entry["buckets"]]
        assert values == sorted(values), key  # cumulative
        assert entry["buckets"][-1] == ("+Inf", entry["count"]), key
        assert len(entry["buckets"]) > 10 and entry["sum"] >= 0, key
    assert ("squall_component_complete_latency_seconds", "split") not in first  # spouts only
    acks = wanted[0]

    def grown() -> bool:
        return _histograms(cluster)[acks]["count"] > first[acks]["count"]

    wait_for(grown, 60, "more acks counted", interval=0.5)


def test_capacities_come_from_the_supervisors(cluster, words):
    """The supervisor registered 3072 MB and 300 % (Storm's keys, the CPU from its
    supervisor.resources.map); words declares no resources, so nothing of it is used."""
    summary = get(cluster, "/cluster/summary").json()
    assert (summary["totalMem"], summary["totalCpu"]) == (3072.0, 300.0)
    assert (summary["availMem"], summary["availCpu"]) == (3072.0, 300.0)
    [sup] = get(cluster, "/supervisor/summary").json()["supervisors"]
    assert (sup["totalMem"], sup["totalCpu"], sup["usedMem"], sup["usedCpu"]) == (
        3072.0,
        300.0,
        0.0,
        0.0,
    )


def test_topology_metrics_per_stream(cluster, words):
    body = get(cluster, f"/topology/{words}/metrics").json()
    assert (body["window"], body["windowHint"]) == (":all-time", "All time")
    [spout] = body["spouts"]
    check(spout, {"id": STR, "emitted": list, "transferred": list, "acked": list})
    check(spout, {"failed": list, "complete_ms_avg": list})
    emitted = {e["stream_id"]: e["value"] for e in spout["emitted"]}
    assert spout["id"] == "sentences" and emitted["default"] > 0
    assert all(not s.startswith("__") for s in emitted)  # system streams only with ?sys=1
    [complete] = spout["complete_ms_avg"]
    assert complete["stream_id"] == "default" and float(complete["value"]) > 0
    bolts = {b["id"]: b for b in body["bolts"]}
    assert set(bolts) == {"split", "count"}
    [executed] = bolts["count"]["executed"]
    assert (executed["component_id"], executed["stream_id"]) == ("split", "default")
    assert executed["value"] > 0
    [execute_ms] = bolts["count"]["executed_ms_avg"]
    assert float(execute_ms["value"]) > 0
    ten = get(cluster, f"/topology/{words}/metrics", params={"window": "600"}).json()
    assert (ten["window"], ten["windowHint"]) == ("600", "10m 0s")
    later = get(cluster, f"/topology/{words}/metrics").json()
    ten_emitted = {e["stream_id"]: e["value"] for e in ten["spouts"][0]["emitted"]}
    all_emitted = {e["stream_id"]: e["value"] for e in later["spouts"][0]["emitted"]}
    assert 0 < ten_emitted["default"] <= all_emitted["default"]
    storm_error(get(cluster, f"/topology/{words}/metrics", params={"window": "9"}), 400, "window")
    storm_error(get(cluster, "/topology/nope-1-1/metrics"), 404, "nope-1-1")


def test_topology_workers_supervisor_history_and_owners(cluster, words):
    page = get(cluster, f"/topology/{words}").json()
    [worker] = page["workers"]
    body = get(cluster, f"/topology-workers/{words}").json()
    assert body["hostPortList"] == [{"host": worker["host"], "port": worker["port"]}]
    storm_error(get(cluster, "/topology-workers/nope-1-1"), 404, "nope-1-1")

    for params in ({"host": worker["host"]}, {"id": "supervisor1"}):
        sup = get(cluster, "/supervisor", params=params).json()
        [one] = sup["supervisors"]
        assert (one["id"], one["totalMem"]) == ("supervisor1", 3072.0)
        [running] = sup["workers"]
        assert (running["topologyId"], running["port"]) == (words, worker["port"])
        assert running["componentNumTasks"] == {"sentences": 1, "split": 2, "count": 2}
    storm_error(get(cluster, "/supervisor", params={"id": "nope"}), 404, "nope")
    storm_error(get(cluster, "/supervisor", params={"host": "nowhere.example"}), 404, "nowhere")
    storm_error(get(cluster, "/supervisor"), 400, "id or a host")

    assert words in get(cluster, "/history/summary").json()["topo-history"]

    owners = {o["owner"]: o for o in get(cluster, "/owner-resources").json()["owners"]}
    mine = owners[page["owner"]]
    assert (mine["totalTopologies"], mine["totalExecutors"], mine["totalWorkers"]) == (1, 5, 1)
    one = get(cluster, f"/owner-resources/{page['owner']}").json()
    assert one["owner"] == page["owner"] and one["totalTopologies"] == 1
    assert [t["id"] for t in one["topologies"]] == [words]
    nobody = get(cluster, "/owner-resources/nobody").json()
    assert (nobody["owner"], nobody["totalTopologies"]) == ("nobody", 0)


def test_profiling_actions(cluster, words):
    [worker] = get(cluster, f"/topology/{words}").json()["workers"]
    where = f"{worker['host']}:{worker['port']}"
    answer = post(cluster, f"/topology/{words}/profiling/start/{where}/10")
    dumps = f"{cluster.ui_url}/api/v1/dumps/{words}/{quote(where, safe='')}"
    assert answer.json() == {"status": "ok", "id": where, "timeout": "10", "dumplink": dumps}
    [active] = get(cluster, f"/topology/{words}/component/sentences").json()["profilerActive"]
    assert (active["host"], active["port"], active["dumplink"]) == (
        worker["host"],
        str(worker["port"]),
        dumps,
    )
    with cluster.client() as client:
        pending = client.getComponentPendingProfileActions(words, "sentences", 0)  # JPROFILE_STOP
    assert [(p.nodeInfo.node, sorted(p.nodeInfo.port)) for p in pending] == [
        (worker["host"], [worker["port"]])
    ]
    for action in ("stop", "dumpprofile", "dumpjstack", "dumpheap"):
        answer = post(cluster, f"/topology/{words}/profiling/{action}/{where}")
        assert answer.json() == {"status": "ok", "id": where}, action
    with cluster.client() as client:
        assert client.getComponentPendingProfileActions(words, "sentences", 0) == []

    def jstacks() -> list:
        listing = httpx.get(dumps, headers=cluster.ui_headers(), timeout=30).json()
        return [link for link in listing if "/jstack-" in link]

    [jstack] = wait_for(jstacks, 60, "the worker's thread dump")
    dump = httpx.get(cluster.ui_url + jstack, headers=cluster.ui_headers(), timeout=30)
    assert dump.status_code == 200 and "ident=" in dump.text  # a stack per thread
    # POST only, as in Storm 2.8 (a GET that acts could be a link on any page)
    assert get(cluster, f"/topology/{words}/profiling/dumpjstack/{where}").status_code in (404, 405)
    storm_error(post(cluster, f"/topology/{words}/profiling/dumpheap/nohost"), 400, "host:port")
    storm_error(post(cluster, f"/topology/{words}/profiling/start/{where}/x"), 400, "timeout")
    storm_error(post(cluster, f"/topology/nope-1-1/profiling/dumpheap/{where}"), 404, "nope")


def test_worker_logs(cluster, words):
    """The links Storm's UI gives lead to the worker's log, read through this UI (the log
    viewer of its host): a page (its tail by default), a search, a download, a listing."""
    page = get(cluster, f"/topology/{words}").json()
    [worker] = page["workers"]
    name = f"{words}/{worker['port']}/worker.log"
    link = worker["workerLogLink"]
    assert link == f"{cluster.ui_url}/api/v1/log?file={quote(name, safe='')}"
    [executor] = get(cluster, f"/topology/{words}/component/sentences").json()["executorStats"]
    assert executor["workerLogLink"] == link
    wait_for(lambda: httpx.get(link, headers=cluster.ui_headers()).text, 60, "a worker log")
    tail = httpx.get(link, headers=cluster.ui_headers(), timeout=30)
    assert tail.status_code == 200 and tail.headers["content-type"].startswith("text/plain")
    size = int(tail.headers["x-log-size"])
    assert size >= len(tail.content) > 0
    whole = get(cluster, "/download", params={"file": name})
    assert whole.status_code == 200 and whole.content.startswith(
        get(cluster, "/log", params={"file": name, "start": "0", "length": "20"}).content
    )
    needle = whole.content.splitlines()[0][:20].decode()
    found = get(cluster, "/search", params={"file": name, "search-string": needle}).json()
    assert found["matches"][0]["byteOffset"] == 0 and found["fileName"] == name
    assert name in get(cluster, "/listLogs", params={"topoId": words}).json()
    storm_error(get(cluster, "/log", params={"file": "../../etc/passwd"}), 400, "file")
    storm_error(get(cluster, "/log", params={"file": f"{words}/1/worker.log"}), 404, "no log")
    outsider = httpx.get(link, timeout=30)  # without the UI's token
    assert outsider.status_code == 401


def test_jsonp(cluster, words):
    plain = get(cluster, "/cluster/summary").json()
    wrapped = get(cluster, "/cluster/summary", params={"callback": "jQuery.cb_1"})
    assert wrapped.status_code == 200
    assert wrapped.headers["content-type"].startswith("application/javascript")
    text = wrapped.text
    assert text.startswith("jQuery.cb_1(") and text.endswith(");")
    assert json.loads(text[len("jQuery.cb_1(") : -2])["slotsTotal"] == plain["slotsTotal"]
    missing = get(cluster, "/topology/nope-1-1", params={"callback": "cb"})
    assert missing.status_code == 404 and missing.text.startswith("cb({")
    for bad in ("alert(1)//", "cb;x", "a b", "x" * 200):
        storm_error(get(cluster, "/cluster/summary", params={"callback": bad}), 400, "callback")
    cross = {"Sec-Fetch-Site": "cross-site"}  # a <script> on another site's page
    storm_error(get(cluster, "/cluster/summary?callback=cb", headers=cross), 403, "JSONP")


def _spawn_ui(cluster, tmp_path, extra: dict) -> tuple[subprocess.Popen, int]:
    port = free_port()
    conf = {**cluster.base_conf(), "storm.local.dir": str(tmp_path), "ui.port": port, **extra}
    conf_file = tmp_path / "ui.yaml"
    conf_file.write_text(yaml.safe_dump(conf))
    log = (tmp_path / "ui.log").open("wb")
    process = subprocess.Popen(
        [sys.executable, "-m", "squall.cli", "--config", str(conf_file), "ui"],
        stdout=log,
        stderr=subprocess.STDOUT,
    )
    log.close()
    return process, port


def test_nimbus_down_is_503(cluster, tmp_path):
    dead = free_port()  # nothing listens there
    process, port = _spawn_ui(cluster, tmp_path, {"nimbus.seeds": [f"127.0.0.1:{dead}"]})
    try:
        url, auth = f"http://127.0.0.1:{port}", cluster.ui_headers()
        up = lambda: httpx.get(url + "/", timeout=5, headers=auth).status_code == 200  # noqa: E731
        wait_for(up, 60, "ui up")
        for path in ("/api/v1/cluster/summary", "/api/v1/topology/x-1-1", "/metrics"):
            storm_error(httpx.get(url + path, timeout=60, headers=auth), 503, "unreachable")
        activate = httpx.post(url + "/api/v1/topology/x/activate", timeout=60, headers=auth)
        storm_error(activate, 503, "nimbus")
    finally:
        terminate(process, 10)


def _context(cluster, name: str | None) -> ssl.SSLContext:
    directory = cluster.credentials_dir
    context = ssl.create_default_context(cafile=str(directory / "ca.pem"))
    if name:
        context.load_cert_chain(directory / f"{name}.pem", directory / f"{name}.key")
    return context


def test_non_loopback_ui_wants_certificates(cluster, words, tmp_path):
    """On a non-loopback ui.host (all addresses here) the UI speaks HTTPS and wants a
    certificate of the cluster CA: none is refused in the handshake, a reader may read but
    not act, a stranger with a certificate may not read, an admin may act."""
    process, port = _spawn_ui(cluster, tmp_path, {"ui.host": "0.0.0.0", "ui.users": ["carol"]})
    try:
        url = f"https://127.0.0.1:{port}/api/v1"

        def up() -> bool:
            return httpx.get(url + "/cluster/summary", verify=_context(cluster, "admin")).is_success

        wait_for(up, 60, "the HTTPS ui to answer admin")
        with pytest.raises(httpx.HTTPError):
            httpx.get(url + "/cluster/summary", verify=_context(cluster, None), timeout=10)
        with pytest.raises(httpx.HTTPError):  # plain HTTP on the HTTPS port
            httpx.get(f"http://127.0.0.1:{port}/api/v1/cluster/summary", timeout=10)
        bob = _context(cluster, "bob")
        storm_error(httpx.get(url + "/cluster/summary", verify=bob), 403, "bob")
        carol = _context(cluster, "carol")
        assert httpx.get(url + f"/topology/{words}", verify=carol).json()["name"] == "words"
        storm_error(httpx.post(url + f"/topology/{words}/kill/0", verify=carol), 403, "carol")
        admin = _context(cluster, "admin")
        assert httpx.post(url + f"/topology/{words}/activate", verify=admin).status_code == 200
    finally:
        terminate(process, 10)


def test_rebalance_takes_executor_counts_as_strings(cluster, words):
    """Storm's own sample sends "5"; last here, as it moves words' tasks."""
    rebalance = f"/topology/{words}/rebalance/0"
    storm_error(
        post(cluster, rebalance, content=b'{"rebalanceOptions": {"executors": {"count": "2.5"}}}'),
        400,
        "executors",
    )
    body = b'{"rebalanceOptions": {"numWorkers": "1", "executors": {"count": "3"}}}'
    assert post(cluster, rebalance, content=body).json()["status"] == "success"

    def counted() -> bool:
        page = get(cluster, f"/topology/{words}").json()
        bolts = {b["boltId"]: b for b in page["bolts"]}
        return page["status"] == "ACTIVE" and bolts["count"]["executors"] == 3

    wait_for(counted, 120, "count to run 3 executors")


def test_log_levels_debug_sampling_and_lag(cluster, words):
    """Storm's /logconfig (GET, POST), /debug/:action/:spct for the topology and a component,
    and /lag (Kafka spouts' only: {} here), through nimbus's setLogConfig, debug, getLogConfig."""
    assert get(cluster, f"/topology/{words}/logconfig").json() == {"namedLoggerLevels": {}}
    want = {"namedLoggerLevels": {"squall.worker": {"target_level": "debug", "timeout": 60}}}
    before_ms = time.time() * 1000
    level = post(cluster, f"/topology/{words}/logconfig", json=want).json()
    set_level = level["namedLoggerLevels"]["squall.worker"]
    assert (set_level["target_level"], set_level["timeout"]) == ("DEBUG", 60)
    assert set_level["timeout_epoch"] >= before_ms + 59_000
    assert get(cluster, f"/topology/{words}/logconfig").json() == level
    remove = {"namedLoggerLevels": {"squall.worker": {"target_level": None}}}
    gone = post(cluster, f"/topology/{words}/logconfig", json=remove).json()
    assert gone == {"namedLoggerLevels": {}}
    loud = {"namedLoggerLevels": {"x": {"target_level": "LOUD", "timeout": 0}}}
    storm_error(post(cluster, f"/topology/{words}/logconfig", json=loud), 400, "LOUD")
    storm_error(post(cluster, f"/topology/{words}/logconfig", content=b"{"), 400, "not JSON")
    storm_error(post(cluster, "/topology/nope-1-1/logconfig", json=want), 404, "nope-1-1")
    storm_error(get(cluster, "/topology/nope-1-1/logconfig"), 404, "nope-1-1")

    answer = post(cluster, f"/topology/{words}/debug/enable/10").json()
    assert answer == {"topologyOperation": "debug/enable", "topologyId": words, "status": "success"}
    page = get(cluster, f"/topology/{words}").json()
    assert (page["debug"], page["samplingPct"]) == (True, 10.0)
    assert post(cluster, f"/topology/{words}/component/split/debug/enable/5").status_code == 200
    split = get(cluster, f"/topology/{words}/component/split").json()
    assert (split["debug"], split["samplingPct"]) == (True, 5.0)
    for path in (f"/topology/{words}", f"/topology/{words}/component/split"):
        assert post(cluster, path + "/debug/disable/0").status_code == 200
    assert get(cluster, f"/topology/{words}").json()["debug"] is False
    storm_error(post(cluster, f"/topology/{words}/debug/maybe/10"), 400, "enable or disable")
    storm_error(post(cluster, f"/topology/{words}/debug/enable/101"), 400, "0 to 100")
    storm_error(post(cluster, f"/topology/{words}/component/nope/debug/enable/5"), 400, "nope")

    assert get(cluster, f"/topology/{words}/lag").json() == {}
    storm_error(get(cluster, "/topology/nope-1-1/lag"), 404, "nope-1-1")
