"""One bad topology cannot hurt the others on its supervisor (issue #11, items 5 and 7), on a
live local cluster with one supervisor:

- a package the supervisor refuses (too many entries) shows as that topology's error in
  getTopologyInfo, while a good topology on the same supervisor runs and its killed worker
  comes back within seconds (it took 152 s when code was fetched on the sync loop);
- a worker leaking memory is stopped at topology.worker.max.memory.mb and the error says so;
- a worker printing in a loop keeps its log files under worker.log.max.bytes;
- with supervisor.run.worker.as.user on, a topology that names no submitter is not started
  (as root, the supervisor's own user) and says why in its errors.
"""

import os
import signal
import textwrap
import time
from pathlib import Path

import pytest

from squall import thrift_api as T
from squall.local import LocalCluster, topology_id, wait_for
from squall.submit import submit_file

TINY = Path(__file__).parents[1] / "integration" / "topologies" / "tiny.py"
MAX_ENTRIES = 200
LOG_MAX = 20_000
LOG_BACKUPS = 2
LEAK_LIMIT_MB = 300

TOPOLOGY = """
import sys
import time

from squall import Bolt, Grouping, Spout, Topology


class Source(Spout):
    outputs = ["n"]

    def initialize(self, conf, context):
        self.held = []

    def next_tuple(self):
        {body}
        self.emit([1])
        return True


class Sink(Bolt):
    def process(self, tup):
        pass


class T(Topology):
    config = {config}
    source = Source.spec(par=1)
    sink = Sink.spec(inputs={{source: Grouping.shuffle}}, par=1)
"""


def topology_file(directory: Path, body: str, config: dict) -> Path:
    directory.mkdir(parents=True, exist_ok=True)
    path = directory / "topology.py"
    code = TOPOLOGY.format(body=body, config={"topology.workers": 1, **config})
    path.write_text(textwrap.dedent(code))
    return path


@pytest.fixture(scope="module")
def cluster(tmp_path_factory):
    conf = {"worker.log.max.bytes": LOG_MAX, "worker.log.backups": LOG_BACKUPS}
    # the supervisor's own limit below nimbus's: nimbus refuses at submit a package past its
    # limit, so only a supervisor with a lower one still meets one (defence in depth)
    strict = {1: {"supervisor.code.max.entries": MAX_ENTRIES}}
    with LocalCluster(
        tmp_path_factory.mktemp("cluster"),
        supervisors=1,
        slots_per_supervisor=6,
        conf=conf,
        supervisor_confs=strict,
    ) as c:
        yield c


def submit(cluster, path: Path, name: str) -> str:
    with cluster.client() as client:
        submit_file(client, path, cluster.client_conf(), name=name)
        return topology_id(client, name)


def kill(cluster, name: str) -> None:
    with cluster.client() as client:
        client.killTopologyWithOpts(name, T.KillOptions(wait_secs=0))


def supervisor_errors(cluster, tid: str) -> list[str]:
    with cluster.client() as client:
        errors = client.getTopologyInfo(tid).errors or {}
    return [e.error for e in errors.get("__supervisor", [])]


def worker_pids(cluster, tid: str) -> dict[Path, int]:
    workers = cluster.directory / "supervisor1" / "supervisor" / "workers"
    return {p: int(p.read_text()) for p in workers.glob(f"{tid}-*.pid")}


def alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    return Path(f"/proc/{pid}/stat").read_text().split()[2] != "Z"


def sizes(directory: Path, pattern: str) -> dict[str, int]:
    """Size of each file matching; one renamed away by a rotation meanwhile is skipped."""
    out = {}
    for path in directory.glob(pattern):
        try:
            out[path.name] = path.stat().st_size
        except FileNotFoundError:
            continue
    return out


def test_a_refused_package_is_its_own_error_and_delays_no_other_topology(cluster, tmp_path):
    bad = topology_file(tmp_path / "bad", "pass", {})
    for i in range(MAX_ENTRIES + 50):
        (bad.parent / f"data{i}.txt").write_text("x")
    bad_tid = submit(cluster, bad, "bad")
    good_tid = submit(cluster, TINY, "good")
    try:
        wait_for(
            lambda: any(
                f"more than {MAX_ENTRIES} entries" in e for e in supervisor_errors(cluster, bad_tid)
            ),
            60,
            "the refused package to show as the bad topology's error",
        )
        stormdist = cluster.directory / "supervisor1" / "supervisor" / "stormdist"
        assert not (stormdist / bad_tid / "code").exists(), "a refused package left files"
        wait_for(
            lambda: (
                len(worker_pids(cluster, good_tid)) == 2
                and all(map(alive, worker_pids(cluster, good_tid).values()))
            ),
            60,
            "the good topology's two workers",
        )
        pid_file, pid = sorted(worker_pids(cluster, good_tid).items())[0]
        os.kill(pid, signal.SIGKILL)
        killed_at = time.monotonic()

        def replaced() -> bool:
            new = worker_pids(cluster, good_tid).get(pid_file)
            return new is not None and new != pid and alive(new)

        wait_for(replaced, 20, "the killed worker to be restarted")
        assert time.monotonic() - killed_at < 20
        wait_for(
            lambda: any("killed by signal 9" in e for e in supervisor_errors(cluster, good_tid)),
            20,
            "the killed worker's exit in the good topology's errors",
        )
        # the bad topology is retried with back-off: it keeps failing, alone
        assert not worker_pids(cluster, bad_tid)
    finally:
        kill(cluster, "bad")
        kill(cluster, "good")


def test_a_leaking_worker_is_stopped_at_its_memory_limit(cluster, tmp_path):
    body = "self.held.append(bytearray(b'x') * (4 << 20)); time.sleep(0.02)"
    leak = topology_file(tmp_path / "leak", body, {"topology.worker.max.memory.mb": LEAK_LIMIT_MB})
    tid = submit(cluster, leak, "leak")
    try:
        text = f"worker exceeded its memory limit of {LEAK_LIMIT_MB} MB"
        errors = wait_for(
            lambda: [e for e in supervisor_errors(cluster, tid) if text in e],
            90,
            "the leaking worker to be stopped for memory",
        )
        resident_mb = int(errors[0].split("(")[1].split(" MB")[0])
        assert resident_mb >= LEAK_LIMIT_MB
    finally:
        kill(cluster, "leak")


def test_a_worker_printing_in_a_loop_keeps_its_logs_under_the_cap(cluster, tmp_path):
    body = "print('chatter ' * 100, flush=True); sys.stderr.write('err ' * 100 + '\\n')"
    chatty = topology_file(tmp_path / "chatty", body, {})
    tid = submit(cluster, chatty, "chatty")
    logs = cluster.directory / "supervisor1" / "supervisor" / "logs"
    try:
        oldest = f"worker-{tid}-*.log.{LOG_BACKUPS}"
        wait_for(lambda: list(logs.glob(oldest)), 90, "the chatty worker's log to rotate twice")
        for _ in range(3):  # and it keeps writing: still bounded a moment later
            files = sizes(logs, f"worker-{tid}-*")
            assert len(files) <= LOG_BACKUPS + 1, files
            assert all(size <= LOG_MAX for size in files.values()), files
            time.sleep(0.5)
    finally:
        kill(cluster, "chatty")


def test_run_as_user_refuses_a_submitter_with_no_account_here(tmp_path_factory):
    """Nimbus records the authenticated submitter ("admin", a certificate name with no Unix
    account on this host); the supervisor will not run its worker as anyone else and says why
    in the topology's errors."""
    if os.geteuid() != 0:
        pytest.skip("supervisor.run.worker.as.user needs root (tests/unit checks the refusal)")
    conf = {"supervisor.run.worker.as.user": True}
    with LocalCluster(tmp_path_factory.mktemp("as-user"), supervisors=1, conf=conf) as cluster:
        tid = submit(cluster, TINY, "anonymous")
        wait_for(
            lambda: any(
                "no user 'admin' on this host" in e for e in supervisor_errors(cluster, tid)
            ),
            60,
            "the refusal in the topology's errors",
        )
        assert not worker_pids(cluster, tid)
