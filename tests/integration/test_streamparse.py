"""streamparse unchanged against squall (#34 item 3): the project `sparse quickstart wordcount`
generates is submitted, listed, counted and killed with streamparse's own `sparse` commands
against an open-mode cluster (`security: false`, Storm's plain Thrift), and against a secure
one through `squall proxy` (#34 item 4), its config.json set up as a Storm user sets it up,
its jar built by tests/integration/streamparse_jar.py standing in for Leiningen.

Exact counts: the quickstart's spout emits dog, cat, zebra, elephant forever, unanchored, to
two count_bolt tasks grouped by word. Once the topology is deactivated (Storm's `deactivate`,
as `storm deactivate` sends it) and its figures settle, every tuple the spout emitted was
executed and counted once by the bolt (emitted == executed == the bolt's own emits, none
failed), and each bolt task executed the tuples of whole words: its count is the sum of the
counts of some of the four words, the two tasks' words partitioning them. `sparse stats`
prints the same figures.

Also here, over the Storm IDL streamparse ships (#34 item 6): a package nimbus could not
unpack is refused at submit, naming what was sent, and a kill of an unknown topology is
NotAliveException whatever its arguments, in open mode as with TLS.
"""

from __future__ import annotations

import io
import itertools
import json
import os
import re
import subprocess
import sys
import time
import zipfile
from collections import Counter
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
from thriftpy2.protocol import TBinaryProtocolFactory
from thriftpy2.rpc import make_client
from thriftpy2.transport import TFramedTransportFactory

from squall.local import LocalCluster, wait_for
from squall.processes import terminate

pytest.importorskip("streamparse")

from streamparse.thrift import storm_thrift as S  # noqa: E402 - after the skip

SPARSE = Path(sys.executable).parent / "sparse"
LEIN = Path(__file__).parent / "streamparse_jar.py"
WORDS = ("dog", "cat", "zebra", "elephant")  # the quickstart spout's cycle
NAME = "wordcount"
ALL_TIME = ":all-time"
SPOUT_STREAM = ("word_spout", "default")


@pytest.fixture(scope="module")
def cluster(tmp_path_factory):
    directory = tmp_path_factory.mktemp("streamparse")
    with LocalCluster(directory, supervisors=1, conf={"security": False}, ui=True) as c:
        yield c


@pytest.fixture(scope="module")
def lein_bin(tmp_path_factory) -> Path:
    """A directory holding `lein`: streamparse_jar.py standing in for Leiningen."""
    bin_dir = tmp_path_factory.mktemp("bin")
    lein = bin_dir / "lein"
    lein.write_text(f'#!/bin/sh\nexec "{sys.executable}" "{LEIN}" "$@"\n')
    lein.chmod(0o755)
    return bin_dir


def quickstart(work: Path, lein_bin: Path, nimbus_port: int, ui_port: int | None) -> Path:
    """`sparse quickstart wordcount` in `work`, its config.json's environment pointed at
    nimbus (or `squall proxy`) as a user would (docs/storm-compatibility.md)."""
    made = sparse(work, "quickstart", NAME, lein_bin=lein_bin)
    assert made.returncode == 0, made.stdout + made.stderr
    directory = work / NAME
    config = json.loads((directory / "config.json").read_text())
    config["envs"]["prod"].update(
        {
            "nimbus": f"127.0.0.1:{nimbus_port}",
            "use_ssh_for_nimbus": False,  # nimbus is reachable: no ssh tunnel
            "use_virtualenv": False,  # streamparse_run is on the workers' PATH (squall's)
        }
    )
    if ui_port:
        config["envs"]["prod"]["ui.port"] = ui_port  # sparse stats reads the UI's REST API
    (directory / "config.json").write_text(json.dumps(config, indent=4))
    return directory


@pytest.fixture(scope="module")
def project(cluster, lein_bin, tmp_path_factory) -> Path:
    work = tmp_path_factory.mktemp("project")
    return quickstart(work, lein_bin, cluster.nimbus_port, cluster.ui_port)


def sparse(
    cwd: Path, *args: str, lein_bin: Path, check: bool = False
) -> subprocess.CompletedProcess:
    """The `sparse` command as a user runs it, with the `lein` stand-in first on PATH."""
    env = {
        **os.environ,
        "PATH": os.pathsep.join([str(lein_bin), str(SPARSE.parent), os.environ.get("PATH", "")]),
        "LEIN_ROOT": "1",  # Leiningen's own switch: streamparse refuses root without it
        "PYTHONWARNINGS": "ignore",  # paramiko's and pkg_resources' deprecation warnings
    }
    done = subprocess.run(
        [str(SPARSE), *args], cwd=cwd, env=env, capture_output=True, text=True, timeout=180
    )
    if check:
        assert done.returncode == 0, f"sparse {' '.join(args)}:\n{done.stdout}{done.stderr}"
    return done


def stats_tables(project: Path) -> str:
    """What `sparse stats -n wordcount` prints. streamparse 5.0.1's `sparse stats` stops
    before it asks anything, on its own version check (parse_version("0.9.2-incubating") is
    an error since packaging 22), so this runs the function it calls after that check."""
    code = f"from streamparse.cli.stats import display_stats; display_stats(None, {NAME!r})"
    env = {**os.environ, "PYTHONWARNINGS": "ignore"}
    done = subprocess.run(
        [sys.executable, "-c", code],
        cwd=project,
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert done.returncode == 0, done.stdout + done.stderr
    return done.stdout


def storm_client(port: int) -> Any:
    """A client as streamparse makes it: its own Storm IDL, plain framed Thrift."""
    return make_client(
        S.Nimbus,
        "127.0.0.1",
        port,
        proto_factory=TBinaryProtocolFactory(),
        trans_factory=TFramedTransportFactory(),
        timeout=60_000,
    )


@dataclass(frozen=True)
class Figures:
    """All time, from getTopologyInfo."""

    spout_emitted: int
    executed: dict[int, int]  # count_bolt's, per task
    bolt_emitted: int
    bolt_failed: int


def counts(client: Any, name: str) -> Figures:
    """The quickstart's figures on its default streams (word_spout to count_bolt, and
    count_bolt's own emits)."""
    tid = next(t.id for t in client.getClusterInfo().topologies if t.name == name)
    spout_emitted, executed, bolt_emitted, failed = 0, {}, 0, 0
    for e in client.getTopologyInfo(tid).executors:
        if e.stats is None:
            continue
        emitted = (e.stats.emitted or {}).get(ALL_TIME, {}).get("default", 0)
        if e.component_id == "word_spout":
            spout_emitted += emitted
        elif e.component_id == "count_bolt":
            bolt = e.stats.specific.bolt
            executed[e.executor_info.task_start] = from_spout(bolt.executed)
            failed += from_spout(bolt.failed)
            bolt_emitted += emitted
    return Figures(spout_emitted, executed, bolt_emitted, failed)


def from_spout(by_window: dict | None) -> int:
    """A bolt figure's all-time count of tuples from word_spout's default stream."""
    streams = (by_window or {}).get(ALL_TIME, {})
    return sum(n for s, n in streams.items() if (s.componentId, s.streamId) == SPOUT_STREAM)


@dataclass
class Settled:
    """Called until it answers: a deactivated topology's final figures, once every tuple
    the spout emitted was executed and nothing changed for `quiet_secs` (several of the
    worker's beats, which carry them). A tuple lost would leave executed short for good,
    one counted twice would leave it over."""

    client: Any
    name: str
    quiet_secs: float
    seen: Figures | None = None
    since: float = 0.0

    def __call__(self) -> Figures | None:
        now = counts(self.client, self.name)
        if now != self.seen:
            self.seen, self.since = now, time.monotonic()
        quiet = time.monotonic() - self.since >= self.quiet_secs
        return now if quiet and now.spout_emitted == sum(now.executed.values()) else None


def word_counts(emitted: int) -> Counter:
    """How often each word is among the first `emitted` of the spout's cycle."""
    return Counter(itertools.islice(itertools.cycle(WORDS), emitted))


def partitions(emitted: int) -> set[tuple[int, ...]]:
    """Every split of the words between two tasks, as the two tasks' sorted tuple counts."""
    per_word = word_counts(emitted)
    splits = set()
    for mask in range(1 << len(WORDS)):
        first = sum(per_word[w] for i, w in enumerate(WORDS) if mask >> i & 1)
        splits.add(tuple(sorted((first, emitted - first))))
    return splits


def table(text: str, title: str) -> list[dict[str, str]]:
    """The rows of the table `sparse` printed under `# title` (texttable, which wraps a long
    cell over several lines of its row: they are joined back, without spaces)."""
    rows: list[list[str]] = []
    current: list[str] | None = None
    for line in text.split(f"# {title}\n", 1)[1].splitlines():
        if line.startswith("+"):  # a rule: the row above it is complete
            rows += [current] if current else []
            current = None
        elif line.startswith("|"):
            cells = [cell.strip() for cell in line.strip()[1:-1].split("|")]
            current = (
                cells if current is None else [a + b for a, b in zip(current, cells, strict=True)]
            )
        else:
            break
    header, *body = rows
    return [dict(zip(header, row, strict=True)) for row in body]


def number(cell: str) -> int:
    return int(cell.replace(",", ""))


def submit_count_settle(project: Path, lein_bin: Path, port: int, beat: float) -> Figures:
    """`sparse submit` and `sparse list`; then, once words are counted, the topology
    deactivated (what `storm deactivate wordcount` sends) and its final figures checked."""
    submitted = sparse(project, "submit", lein_bin=lein_bin, check=True)
    assert "Submitting wordcount topology to nimbus...done" in submitted.stdout
    listed = sparse(project, "list", lein_bin=lein_bin, check=True).stdout
    rows = table(listed, "Topology-specific values")
    assert [(t["name"], t["status"], t["num_workers"]) for t in rows] == [(NAME, "ACTIVE", "1")]
    client = storm_client(port)
    try:
        wait_for(lambda: sum(counts(client, NAME).executed.values()) >= 400, 180, "counting")
        client.deactivate(NAME)
        settled = Settled(client, NAME, quiet_secs=3 * beat)
        final = wait_for(settled, 120, "the deactivated topology's final figures")
        tid = next(t.id for t in client.getClusterInfo().topologies if t.name == NAME)
        errors = client.getTopologyInfo(tid).errors
    finally:
        client.close()
    spout = final.spout_emitted
    assert spout >= 400
    assert sum(final.executed.values()) == spout == final.bolt_emitted  # once each, one emit
    assert final.bolt_failed == 0
    assert len(final.executed) == 2  # count_bolt's par=2
    assert tuple(sorted(final.executed.values())) in partitions(spout)  # whole words per task
    assert not any(errors.values()), errors
    return final


def kill_and_wait(project: Path, lein_bin: Path) -> None:
    sparse(project, "kill", "--wait", "0", lein_bin=lein_bin, check=True)
    wait_for(
        lambda: (
            "No topologies found." in sparse(project, "list", lein_bin=lein_bin, check=True).stdout
        ),
        60,
        "the killed topology to be removed",
    )


def test_quickstart_wordcount_submit_list_stats_kill(cluster, lein_bin, project):
    beat = cluster.client_conf()["worker.heartbeat.frequency.secs"]
    spout = submit_count_settle(project, lein_bin, cluster.nimbus_port, beat).spout_emitted
    printed = stats_tables(project)
    spouts = table(printed, "Spouts (All time)")
    bolts = table(printed, "Bolt (All time)")
    assert [(r["spoutId"], number(r["emitted"]), number(r["failed"])) for r in spouts] == [
        ("word_spout", spout, 0)
    ]
    executed_acked_failed = [
        (r["boltId"], number(r["executed"]), number(r["acked"]), number(r["failed"])) for r in bolts
    ]
    assert executed_acked_failed == [("count_bolt", spout, spout, 0)]  # pystorm acks each
    kill_and_wait(project, lein_bin)


# --- a secure cluster, through `squall proxy` (#34 item 4) ------------------------------

PROXY_LINE = re.compile(r"plain Thrift on 127\.0\.0\.1:(\d+) -> nimbus leader \S+ as 'admin'")


@pytest.fixture
def proxied(tmp_path_factory) -> Iterator[tuple[LocalCluster, int]]:
    """A secure cluster (TLS, the default) and `squall proxy --port 0` as its admin, the
    identity the cluster's client conf names; the proxy's port, read from its startup line."""
    with LocalCluster(tmp_path_factory.mktemp("secure"), supervisors=1) as c:
        out = c.directory / "proxy.out"
        command = [sys.executable, "-m", "squall.cli", "--config", str(c.client_conf_file())]
        with out.open("wb") as sink:
            process = subprocess.Popen(
                [*command, "proxy", "--port", "0"],
                stdout=sink,
                stderr=subprocess.STDOUT,
                stdin=subprocess.DEVNULL,
                env={**os.environ, "COLUMNS": "1000"},
            )
        try:

            def listening() -> re.Match | None:
                if process.poll() is not None:
                    raise AssertionError(f"squall proxy exited: {out.read_text()}")
                return PROXY_LINE.search(out.read_text())

            yield c, int(wait_for(listening, 60, "squall proxy's startup line").group(1))
        finally:
            terminate(process, 10)


def test_quickstart_wordcount_through_squall_proxy_on_a_secure_cluster(proxied, lein_bin, tmp_path):
    """The same project, pointed at the proxy: sparse acts as the proxy's user (the owner
    nimbus records). `sparse stats` is left out: it reads the UI over plain HTTP, which on a
    secure cluster wants the UI's token, and streamparse cannot send one."""
    cluster, port = proxied
    project = quickstart(tmp_path, lein_bin, port, None)
    beat = cluster.client_conf()["worker.heartbeat.frequency.secs"]
    submit_count_settle(project, lein_bin, port, beat)
    listed = sparse(project, "list", lein_bin=lein_bin, check=True).stdout
    assert [t["owner"] for t in table(listed, "Topology-specific values")] == ["admin"]
    kill_and_wait(project, lein_bin)


# --- #34 item 6: refused at submit, before anything is scheduled -----------------------


def refused_topology() -> Any:
    """A streamparse topology (its DSL, as a project defines one): never run here."""
    from streamparse import Bolt, Grouping, Spout, Topology

    class Words(Spout):
        outputs = ["word"]

    class Count(Bolt):
        outputs = ["word", "count"]

    class Refused(Topology):
        words = Words.spec()
        count = Count.spec(inputs={words: Grouping.fields("word")})

    return Refused.thrift_topology


def broken_jar() -> bytes:
    whole = io.BytesIO()
    with zipfile.ZipFile(whole, "w", zipfile.ZIP_DEFLATED) as jar:
        jar.writestr("resources/spouts/words.py", "x = 1\n" * 1000)
    data = whole.getvalue()
    return data[: len(data) // 2]  # cut short: its directory of entries is gone


@pytest.mark.parametrize(
    ("package", "problem"),
    [
        (b"not a code package", "neither a jar (a zip) nor a tgz (a gzip'd tar)"),
        (broken_jar(), "cannot unpack the jar"),
    ],
    ids=["not-a-package", "broken-jar"],
)
def test_an_unusable_package_is_refused_at_submit(cluster, package, problem):
    client = storm_client(cluster.nimbus_port)
    try:
        location = client.beginFileUpload()
        client.uploadChunk(location, package)
        client.finishFileUpload(location)
        with pytest.raises(S.InvalidTopologyException) as refused:
            client.submitTopology("refused", location, "{}", refused_topology())
        assert problem in refused.value.msg and "code.tgz" not in refused.value.msg
        assert client.isTopologyNameAllowed("refused")  # nothing was scheduled
        assert "refused" not in {t.name for t in client.getClusterInfo().topologies}
    finally:
        client.close()


def test_kill_of_an_unknown_topology_is_not_alive_before_its_arguments(cluster):
    client = storm_client(cluster.nimbus_port)
    try:
        with pytest.raises(S.NotAliveException):
            client.killTopologyWithOpts("no-such-topology", S.KillOptions(wait_secs=-1))
    finally:
        client.close()
