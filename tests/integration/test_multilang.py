"""Storm multilang on squall (#14), on one real local cluster: a streamparse word count
(pystorm classes in a jar's resources/, the StormTopology built by streamparse's DSL and
submitted with Storm's IDL over TLS Thrift) gives exact counts; a bash shell bolt proves the
protocol is language-neutral, and its malformed and out-of-order messages become errors in
getTopologyInfo and a restarted subprocess, never a hung worker."""

from __future__ import annotations

import io
import json
import sys
import zipfile
from collections import Counter
from pathlib import Path
from typing import Any

import pytest
from thriftpy2.protocol import TBinaryProtocolFactory
from thriftpy2.rpc import make_client
from thriftpy2.transport import TFramedTransportFactory

from squall.local import LocalCluster, topology_id, wait_for
from squall.security.tls import client_context
from squall.submit import submit_file

from .conftest import TOPOLOGIES

pytest.importorskip("streamparse")

JAR_RESOURCES = Path(__file__).parent / "multilang_jar" / "resources"


@pytest.fixture(scope="module")
def cluster(tmp_path_factory):
    with LocalCluster(tmp_path_factory.mktemp("multilang"), supervisors=1) as c:
        yield c


def storm_jar() -> bytes:
    """The jar `sparse submit` would upload: the components' code under resources/."""
    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w") as jar:
        jar.writestr("META-INF/MANIFEST.MF", "Manifest-Version: 1.0\n")
        for path in sorted(JAR_RESOURCES.rglob("*.py")):
            jar.write(path, f"resources/{path.relative_to(JAR_RESOURCES)}")
    return buf.getvalue()


def streamparse_topology() -> Any:
    """streamparse's own DSL over the pystorm classes, as a streamparse project has it."""
    sys.path.insert(0, str(JAR_RESOURCES))
    import multilang_wordcount as wc
    from streamparse import Grouping, Topology

    class WordCount(Topology):
        sentences = wc.SentenceSpout.spec()
        split = wc.SplitBolt.spec(inputs=[sentences], par=2)
        count = wc.CountBolt.spec(inputs={split: Grouping.fields("word")}, par=2)

    return WordCount, wc.SENTENCES


def storm_client(cluster: LocalCluster) -> Any:
    from streamparse.thrift import storm_thrift

    return make_client(
        storm_thrift.Nimbus,
        "127.0.0.1",
        cluster.nimbus_port,
        proto_factory=TBinaryProtocolFactory(),
        trans_factory=TFramedTransportFactory(),
        timeout=60_000,
        ssl_context=client_context(cluster.client_conf()),
    )


def last_counts(directory: Path) -> Counter:
    counts: Counter = Counter()
    for path in directory.glob("counts-*.txt"):
        for line in path.read_text().splitlines():
            word, _, n = line.partition(" ")
            if n.isdigit():
                counts[word] = max(counts[word], int(n))
    return counts


def test_streamparse_word_count_submitted_over_storm_thrift(cluster, tmp_path):
    topology, sentences = streamparse_topology()
    out = tmp_path / "counts"
    client = storm_client(cluster)
    try:
        # a cluster is up once its supervisors registered; its nimbus may be taking the lead
        location = wait_for(client.beginFileUpload, 60, "nimbus to lead (an upload begun)")
        client.uploadChunk(location, storm_jar())
        client.finishFileUpload(location)
        conf = {"topology.workers": 1, "topology.output.dir": str(out)}
        client.submitTopology("sp-wordcount", location, json.dumps(conf), topology.thrift_topology)
    finally:
        client.close()
    expected = Counter(word for s in sentences for word in s.split())

    def finished() -> bool:  # every count reached, or one went past (then fail at once)
        counts = last_counts(out)
        return counts == expected or any(counts[w] > n for w, n in expected.items())

    wait_for(finished, 180, "the streamparse word count")
    assert last_counts(out) == expected
    with cluster.client() as squall_client:
        tid = topology_id(squall_client, "sp-wordcount")
        shells = squall_client.getTopology(tid)
        assert shells.bolts["count"].bolt_object.shell.execution_command == "streamparse_run"
        errors = squall_client.getTopologyInfo(tid).errors or {}
        assert not any(errors.values()), errors
        squall_client.killTopologyWithOpts("sp-wordcount", _kill_now())


def _kill_now() -> Any:
    from squall import thrift_api as T

    return T.KillOptions(wait_secs=0)


def sink_rows(directory: Path) -> list[dict[str, Any]]:
    rows = []
    for path in directory.glob("*.jsonl"):
        for line in path.read_text().splitlines():
            try:
                rows.append(json.loads(line)["row"])
            except ValueError:
                continue  # a torn last line
    return rows


def error_texts(client: Any, tid: str, component: str) -> list[str]:
    return [e.error for e in (client.getTopologyInfo(tid).errors or {}).get(component, [])]


def test_bash_bolt_and_its_protocol_errors(cluster, tmp_path):
    out = tmp_path / "upper"
    with cluster.client() as client:
        submit_file(
            client,
            TOPOLOGIES / "shell_upper.py",
            cluster.client_conf(),
            name="shell-upper",
            overrides={"topology.output.dir": str(out)},
        )
        tid = topology_id(client, "shell-upper")
        good = ["ALPHA", "BETA", "GAMMA", "DELTA", "EPSILON"]
        wait_for(
            lambda: sorted(r["word"] for r in sink_rows(out)) == sorted(good),
            180,
            "the bash bolt's upper-cased words",
        )
        rows = {r["word"]: r["pid"] for r in sink_rows(out)}
        # one subprocess before "garbage", one between it and "disorder", one after
        assert rows["ALPHA"] == rows["BETA"] != rows["GAMMA"] != rows["DELTA"]
        assert rows["DELTA"] == rows["EPSILON"]

        def both_errors() -> list[str] | None:
            texts = error_texts(client, tid, "upper")
            found = any("not JSON" in t for t in texts) and any("acks tuple" in t for t in texts)
            return texts if found else None

        texts = wait_for(both_errors, 60, "the protocol errors in getTopologyInfo")
        assert all("restarted" in t for t in texts if "not JSON" in t or "acks tuple" in t)
        client.killTopologyWithOpts("shell-upper", _kill_now())


# --- one shell bolt task on its own: a real bash subprocess, the executor's side recorded ---

UPPER_DIR = TOPOLOGIES  # holds resources/upper.sh, as an unpacked package would


class RecordingCollector:
    """The executor's side of a component (components.py: a component talks to the worker
    only through its collector): records emits, answers with fixed target tasks."""

    def __init__(self) -> None:
        self.emits: list[tuple[list[Any], str, int | None, Any]] = []

    def emit(self, values: list[Any], stream: str, direct: int | None, msg_id: Any) -> list[int]:
        self.emits.append((values, stream, direct, msg_id))
        return [7, 9]


@pytest.fixture
def upper_bolt():
    from squall.components import TaskContext
    from squall.shell_components import ShellBolt

    bolt = ShellBolt(execution_command="bash", script="upper.sh", code_dir=str(UPPER_DIR))
    bolt.collector = RecordingCollector()
    tasks = {1: "words", 2: "__acker", 3: "upper"}
    context = TaskContext("t-1", "upper", 3, (3,), "/nonexistent", task_components=tasks)
    bolt.initialize({"topology.subprocess.timeout.secs": 4}, context)
    try:
        yield bolt
    finally:
        bolt.cleanup()


def word(text: str) -> Any:
    from squall.components import Tuple

    return Tuple("words", 1, "default", ("word",), (text,))


def test_shell_bolt_emits_anchored_and_answers_need_task_ids(upper_bolt):
    pid = upper_bolt.task.shell.pid
    upper_bolt.process(word("alpha"))
    upper_bolt.process(word("tasks"))
    assert upper_bolt.collector.emits == [
        (["ALPHA", pid], "default", None, None),
        (["TASKS", pid], "default", None, None),
        (["[7,9]", pid], "default", None, None),  # the task ids the worker answered
    ]


def test_the_handshake_gives_storms_context(upper_bolt):
    upper_bolt.process(word("context"))
    values = upper_bolt.collector.emits[-1][0]
    assert json.loads(values[0]) == {
        "task->component": {"1": "words", "2": "__acker", "3": "upper"},
        "taskid": 3,
        "componentid": "upper",
    }


def test_reported_errors_fail_nothing_and_reach_idle(upper_bolt, caplog):
    from squall.shell_components import ShellFailure

    upper_bolt.process(word("report"))  # acked: returns
    assert upper_bolt.task.metrics == {"reports": 1}
    with pytest.raises(ShellFailure, match="something to report"):
        upper_bolt.idle()
    upper_bolt.idle()  # reported once
    with caplog.at_level("WARNING", logger="squall.worker.multilang"):
        with pytest.raises(ShellFailure, match="failed tuple"):
            upper_bolt.process(word("failme"))
        wait_for(lambda: "failing 2 on purpose" in caplog.text, 10, "the subprocess's stderr")


@pytest.mark.parametrize(
    ("misbehaviour", "cause"),
    [
        ("garbage", "is not JSON"),
        ("disorder", "acks tuple 'not-1' while tuple '1' is in process"),
        ("die", "closed its stdout (exit status 3)"),
        ("hang", "did not answer within 4s"),
    ],
)
def test_a_broken_subprocess_is_an_error_and_restarted(upper_bolt, misbehaviour, cause):
    from squall.worker.multilang_process import MultilangError

    first = upper_bolt.task.shell.pid
    with pytest.raises(MultilangError, match="its subprocess was restarted") as raised:
        upper_bolt.process(word(misbehaviour))
    assert cause in str(raised.value)
    second = upper_bolt.task.shell.pid
    assert second != first
    upper_bolt.process(word("after"))
    assert upper_bolt.collector.emits[-1][0] == ["AFTER", second]


def test_a_command_that_cannot_start_is_a_clear_error():
    from squall.components import TaskContext
    from squall.shell_components import ShellBolt
    from squall.worker.multilang_process import MultilangError

    bolt = ShellBolt(execution_command="no-such-command-here", script="x", code_dir=str(UPPER_DIR))
    context = TaskContext("t-1", "upper", 3, (3,), "/nonexistent")
    try:
        with pytest.raises(MultilangError, match="cannot start.*No such file"):
            bolt.initialize({}, context)
    finally:
        bolt.cleanup()


def test_heartbeats_find_a_subprocess_that_died_while_idle(upper_bolt):
    import os
    import signal

    beat = upper_bolt.task.last_exchange
    wait_for(lambda: upper_bolt.task.last_exchange > beat, 10, "a heartbeat answered by sync")
    first = upper_bolt.task.shell.pid
    os.kill(first, signal.SIGKILL)  # the bash subprocess this test's fixture started
    wait_for(lambda: upper_bolt.task.shell and upper_bolt.task.shell.pid != first, 15, "a restart")
    with pytest.raises(Exception, match="closed its stdout|went away"):
        upper_bolt.idle()
