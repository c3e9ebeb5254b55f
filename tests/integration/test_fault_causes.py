"""Every way a topology stops says why, where an operator looks (issue 35, "Done when"): the
UI's topology page as headless Chromium renders it, the UI's REST API (schedulerInfo and the
components' lastError), `squall list` (the line under the table that says why a topology's
tasks do not run) and `squall get-errors`.

One cluster and one browser for all of it. The broken topologies are submitted together
while the cluster has no supervisor, so nimbus's copy of two packages can be broken before
any supervisor fetches them; then the supervisor starts and each fails its own way:

- code fetch: nimbus cannot read its copy of the package (the download fails);
- unpack: nimbus's copy is corrupt (not a gzip tar);
- import: a bolt imports a package the worker's host does not have;
- worker exit: a bolt prints why and ends its worker (os._exit) in initialize;
- memory: the worker is over topology.worker.max.memory.mb;
- Spark: a SparkBolt whose Spark Connect server (topology.spark.connect.remote) is not there.

Last, ZooKeeper goes away: the pages (topology, component, supervisor) are marked stale and
name ZooKeeper as the cause, and `squall list` and `squall get-errors` say so.

Then, every slot taken, a supervisor holding another CA's certificate starts for one more
topology: nimbus refuses it, it takes no slots, and that topology names the refusal.
"""

from __future__ import annotations

import contextlib
import json
import os
import socket
import subprocess
import sys
import textwrap
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path

import httpx
import pytest

from squall.client import download
from squall.code_package import CODE_FILE, STRUCTURE_FILE
from squall.config import cluster_conf
from squall.local import LocalCluster, topology_id, wait_for
from squall.security.certificates import ensure_credentials
from squall.submit import submit_file
from squall.zk.server import free_port

from ..security.cert_factory import foreign_supervisor_security
from .conftest import TOPOLOGIES

pytestmark = [pytest.mark.integration, pytest.mark.timeout(600)]
CHROMIUM = "/usr/bin/chromium"
LICENCE = "/etc/geocoder/licence.key"

HEADER = """
import os
import sys

from squall import Bolt, Spout, Topology


class Numbers(Spout):
    outputs = ["n"]

    def next_tuple(self):
        return False
"""

BOLTS = {
    "plain": "class Step(Bolt):\n    pass\n",
    "import": textwrap.dedent(
        """
        class Step(Bolt):
            def initialize(self, conf, context):
                import squall_geocoder_not_installed  # noqa: F401 - missing on purpose
        """
    ),
    "memory": textwrap.dedent(
        """
        class Step(Bolt):
            def initialize(self, conf, context):
                self.ballast = b"x" * (160 << 20)  # written, so resident: over 64 MB
        """
    ),
    "exit": textwrap.dedent(
        f"""
        class Step(Bolt):
            def initialize(self, conf, context):
                print("cannot open {LICENCE}: set GEOCODER_LICENCE", file=sys.stderr)
                sys.stderr.flush()
                os._exit(3)
        """
    ),
}

TOPOLOGY = """

class Broken(Topology):
    config = {config!r}
    numbers = Numbers.spec()
    step = Step.spec(inputs=[numbers])
"""


def closed_port() -> int:
    """A loopback port nothing listens on (bound a moment, then given back)."""
    with socket.create_server(("127.0.0.1", 0)) as s:
        return s.getsockname()[1]


SPARK_PORT = closed_port()


@dataclass(frozen=True)
class Fault:
    """One way to break a topology: its source, its conf overrides, what to do to nimbus's
    copy of its package before a supervisor fetches it, and the cause that must be shown."""

    source: str
    cause: str
    overrides: dict | None = None
    break_package: Callable[[Path], None] | None = None


def unreadable(code: Path) -> None:
    code.unlink()
    code.mkdir()  # nimbus opens it to send it: IsADirectoryError


def corrupt(code: Path) -> None:
    code.write_bytes(b"\x1f\x8b" + bytes(40))  # a gzip header, then nothing that unpacks


def source(bolt: str, **config) -> str:
    conf = {"topology.workers": 1, "topology.acker.executors": 0, **config}
    return HEADER + BOLTS[bolt] + TOPOLOGY.format(config=conf)


FAULTS = {
    "fetch": Fault(source("plain"), "nimbus cannot read its copy", None, unreadable),
    "unpack": Fault(
        source("plain"),
        "cannot unpack the tgz: unsupported compression method (nimbus accepted this "
        "package at submit: either its copy is damaged, then kill the topology and submit it "
        "again",
        None,
        corrupt,
    ),
    "import": Fault(
        source("import"), "ModuleNotFoundError: No module named 'squall_geocoder_not_installed'"
    ),
    "exit": Fault(source("exit"), f"cannot open {LICENCE}: set GEOCODER_LICENCE"),
    "memory": Fault(
        source("memory", **{"topology.worker.max.memory.mb": 64}),
        "worker exceeded its memory limit of 64 MB",
    ),
    "spark": Fault(
        (TOPOLOGIES / "spark_ticking.py").read_text(),
        f"cannot reach the Spark Connect server at 127.0.0.1:{SPARK_PORT} "
        "(topology.spark.connect.remote): connection refused",
        {"topology.spark.connect.remote": f"127.0.0.1:{SPARK_PORT}"},
    ),
}


@pytest.fixture(scope="module")
def cluster(tmp_path_factory) -> Iterator[LocalCluster]:
    directory = tmp_path_factory.mktemp("fault-causes")
    with LocalCluster(directory, supervisors=0, slots_per_supervisor=len(FAULTS), ui=True) as c:
        yield c


def break_copy(cluster: LocalCluster, tid: str, how: Callable[[Path], None]) -> None:
    """Have nimbus cache its files of `tid` (a download starts that), then break the cached
    package the supervisor will be sent."""
    with cluster.client() as client:
        download(client, f"{tid}/{STRUCTURE_FILE}", cluster.directory / f"{tid}.structure")
    how(cluster.directory / "nimbus" / "nimbus" / "stormdist" / tid / CODE_FILE)


@pytest.fixture(scope="module")
def submitted(cluster, tmp_path_factory) -> dict[str, tuple[str, str]]:
    """Each fault's topology, submitted before the supervisor starts: fault -> (name, id)."""
    out = {}
    with cluster.client() as client:
        for fault, spec in FAULTS.items():
            folder = tmp_path_factory.mktemp(fault)  # a package of one file each
            (folder / "topology.py").write_text(spec.source)
            conf = cluster.client_conf()
            submit_file(client, folder / "topology.py", conf, name=fault, overrides=spec.overrides)
            out[fault] = (fault, topology_id(client, fault))
    for fault, spec in FAULTS.items():
        if spec.break_package:
            break_copy(cluster, out[fault][1], spec.break_package)
    cluster.start_supervisor(1)
    return out


@pytest.fixture(scope="module")
def browser(cluster) -> Iterator:
    """One headless Chromium page, its token stored by the UI's own address."""
    if not Path(CHROMIUM).exists():
        pytest.skip(f"{CHROMIUM} is missing")
    from playwright.sync_api import sync_playwright

    with sync_playwright() as p:
        chromium = p.chromium.launch(executable_path=CHROMIUM, headless=True)
        try:
            page = chromium.new_page()
            page.goto(cluster.ui_address)  # stores the token, then the clean address
            page.wait_for_selector("#main[data-updated]", timeout=60_000)
            yield page
        finally:
            chromium.close()


def cli(cluster: LocalCluster, *args: str) -> subprocess.CompletedProcess:
    command = [sys.executable, "-m", "squall.cli", "--config", str(cluster.client_conf_file())]
    wide = {**os.environ, "COLUMNS": "1000"}
    return subprocess.run([*command, *args], capture_output=True, text=True, timeout=120, env=wide)


def rest(cluster: LocalCluster, tid: str) -> dict:
    url = f"{cluster.ui_url}/api/v1/topology/{tid}"
    return httpx.get(url, timeout=30, headers=cluster.ui_headers()).json()


def rest_causes(page: dict) -> list[str]:
    """Where the REST topology page says why: its schedulerInfo and each component's
    lastError."""
    return [page.get("schedulerInfo") or ""] + [
        c.get("lastError") or "" for c in [*page.get("spouts", []), *page.get("bolts", [])]
    ]


def listed_cause(cluster: LocalCluster, name: str, tid: str) -> str:
    done = cli(cluster, "list")
    assert done.returncode == 0, done.stderr
    prefix = f"{name} ({tid}): "
    lines = [line for line in done.stdout.splitlines() if line.startswith(prefix)]
    return lines[0] if lines else ""


def get_errors(cluster: LocalCluster, name: str) -> dict:
    done = cli(cluster, "get-errors", name)
    assert done.returncode == 0, done.stdout + done.stderr
    return json.loads(done.stdout)["Comp-Errors"]


def shown_on_page(page, cluster: LocalCluster, tid: str) -> str:
    """The topology page's text, a fresh render of it."""
    page.goto(f"{cluster.ui_url}/#/topology/{tid}")
    page.reload()  # a fresh read of the page's data each look
    page.wait_for_selector("#topology-scheduler", timeout=30_000)
    return page.locator("#main").inner_text()


@pytest.mark.parametrize("fault", list(FAULTS))
def test_the_cause_is_shown_where_an_operator_looks(cluster, submitted, browser, fault):
    name, tid = submitted[fault]
    shown_everywhere(cluster, browser, name, tid, FAULTS[fault].cause, fault)


def shown_everywhere(cluster, browser, name: str, tid: str, cause: str, fault: str) -> None:
    """`cause` in REST, in `squall list`, in `squall get-errors` and on the topology page,
    each waited for (a worker restarting between two reads: the next read has it again)."""

    def in_rest() -> bool:
        return any(cause in text for text in rest_causes(rest(cluster, tid)))

    wait_for(in_rest, 150, f"{fault}: the cause in REST: {rest_causes(rest(cluster, tid))}")
    wait_for(
        lambda: cause in listed_cause(cluster, name, tid),
        60,
        f"{fault}: the cause in `squall list`:\n{cli(cluster, 'list').stdout}",
    )
    wait_for(
        lambda: any(cause in e for e in get_errors(cluster, name).values()),
        60,
        f"{fault}: the cause in `squall get-errors`: {get_errors(cluster, name)}",
    )
    wait_for(
        lambda: cause in shown_on_page(browser, cluster, tid),
        60,
        f"{fault}: the cause on the topology page",
    )
    assert "Traceback" not in listed_cause(cluster, name, tid)


def test_a_supervisor_nimbus_refuses_is_named_on_the_topology_it_would_run(
    cluster, submitted, browser, tmp_path
):
    """Every slot is taken by the faults above; the one supervisor that could run one more
    topology holds a certificate of another CA (its ca.pem trusts both, so its own check
    passes): it takes no slots, and the topology with tasks placed nowhere says why."""
    other = ensure_credentials(cluster_conf(**{"storm.local.dir": str(tmp_path / "other")}))
    security = foreign_supervisor_security(
        cluster.credentials_dir, other, tmp_path / "supervisor-security"
    )
    extra = {"security.dir": str(security), "supervisor.slots.ports": [free_port()]}
    extra |= {"supervisor.heartbeat.frequency.secs": 2, "supervisor.id": "untrusted"}
    folder = tmp_path / "cert"
    folder.mkdir()
    (folder / "topology.py").write_text(source("plain"))
    with cluster.client() as client:
        submit_file(client, folder / "topology.py", cluster.client_conf(), name="cert")
        tid = topology_id(client, "cert")
    cluster._spawn("untrusted-supervisor", "supervisor", extra)
    try:
        cause = "nimbus refused the certificate of 127.0.0.1: unknown CA"
        shown_everywhere(cluster, browser, "cert", tid, cause, "cert")
        assert "squall credentials issue supervisor" in listed_cause(cluster, "cert", tid)
    finally:
        cluster.stop_process("untrusted-supervisor")


def test_zookeeper_loss_marks_every_place_stale_and_names_zookeeper(cluster, submitted, browser):
    """Last of the module: ZooKeeper stops, and is started again only for the teardown."""
    name, tid = submitted["import"]
    assert cluster.zookeeper is not None
    cluster.zookeeper.stop()
    try:

        def stale_rest() -> bool:
            page = rest(cluster, tid)
            return bool(page.get("stale")) and "ZooKeeper unreachable" in page["staleNote"]

        wait_for(stale_rest, 90, "the REST topology page marked stale")

        def listed_stale() -> bool:
            done = cli(cluster, "list")
            return done.returncode == 0 and done.stdout.startswith("ZooKeeper unreachable since")

        wait_for(listed_stale, 60, "`squall list` to say ZooKeeper is unreachable")
        errors = cli(cluster, "get-errors", name)
        assert errors.returncode == 0, errors.stderr
        assert "ZooKeeper unreachable since" in errors.stderr
        assert json.loads(errors.stdout)["Topology Name"] == name

        def stale_page() -> bool:
            shown = shown_on_page(browser, cluster, tid)
            return "ZooKeeper unreachable since" in shown

        wait_for(stale_page, 60, "the topology page to say ZooKeeper is unreachable")
        browser.goto(f"{cluster.ui_url}/#/topology/{tid}/component/numbers")
        browser.wait_for_selector("#stale", timeout=30_000)  # the component page too
        assert "ZooKeeper unreachable since" in browser.locator("#stale").inner_text()
        url = f"{cluster.ui_url}/api/v1/supervisor?id=supervisor1"
        supervisor = httpx.get(url, timeout=30, headers=cluster.ui_headers()).json()
        assert supervisor["stale"] and "ZooKeeper unreachable" in supervisor["staleNote"]
    finally:
        with contextlib.suppress(Exception):
            cluster.zookeeper.start()
