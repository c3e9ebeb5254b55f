"""A worker's children cannot leave it (issue #36, item 2), on a live local cluster where the
kernel lets the supervisor make cgroups (root, a writable hierarchy with the memory
controller; skipped elsewhere, with the reason):

A component forks a child that calls setsid() and forks again (the grandchild is in a
session of its own, its parent init), which left the worker's session: before cgroups its
memory went uncounted (860 MB against a 400 MB limit) and it survived `squall kill`. Now
- it runs in its worker's cgroup;
- its memory counts against the worker's limit: the worker is stopped for memory;
- it is killed when its worker dies and is reaped, and when the topology is killed;
- a supervisor started again ends what a dead run of it left in its cgroups.
"""

import contextlib
import os
import signal
import subprocess
import textwrap
from pathlib import Path

import pytest

from squall import thrift_api as T
from squall.local import LocalCluster, topology_id, wait_for
from squall.submit import submit_file
from squall.supervisor import cgroup_fs
from squall.supervisor.cgroups import Limits
from squall.supervisor.launcher import Launcher

LIMIT_MB = 300

TOPOLOGY = """
import os
import time

from squall import Bolt, Grouping, Spout, Topology

RECORD = {record!r}
CHILD_MB = {child_mb}


def escape():
    \"\"\"A child out of the worker's session and parentage: setsid, then fork again.\"\"\"
    worker = os.getpid()
    first = os.fork()
    if first:
        os.waitpid(first, 0)
        return
    try:
        os.setsid()
        if os.fork():
            os._exit(0)
        with open(RECORD, "a") as f:
            f.write(f"{{worker}} {{os.getpid()}}\\n")
        held = []
        for _ in range(CHILD_MB // 10):
            held.append(bytearray(b"x") * (10 << 20))  # touched: resident
            time.sleep(0.02)
        while True:
            time.sleep(1)
    finally:
        os._exit(0)


class Source(Spout):
    outputs = ["n"]

    def initialize(self, conf, context):
        escape()

    def next_tuple(self):
        time.sleep(0.05)
        self.emit([1])
        return True


class Sink(Bolt):
    def process(self, tup):
        pass


class T(Topology):
    config = {{"topology.workers": 1, "topology.worker.max.memory.mb": {limit}}}
    source = Source.spec(par=1)
    sink = Sink.spec(inputs={{source: Grouping.shuffle}}, par=1)
"""


def cgroups_unusable() -> str | None:
    """Why this host cannot run the tests (None: it can), found as the supervisor finds it."""
    try:
        host = cgroup_fs.open_cgroups({}, "cgroup-test-probe")
    except cgroup_fs.CgroupError as exc:
        return str(exc)
    host.close()
    return None


UNUSABLE = cgroups_unusable()
pytestmark = pytest.mark.skipif(bool(UNUSABLE), reason=f"no usable cgroups here: {UNUSABLE}")


@pytest.fixture(scope="module")
def cluster(tmp_path_factory):
    with LocalCluster(
        tmp_path_factory.mktemp("cluster"), supervisors=1, slots_per_supervisor=4
    ) as c:
        yield c


def submit(cluster, directory: Path, name: str, child_mb: int) -> tuple[str, Path]:
    directory.mkdir(parents=True)
    record = directory / "children.txt"
    code = TOPOLOGY.format(record=str(record), child_mb=child_mb, limit=LIMIT_MB)
    (directory / "topology.py").write_text(textwrap.dedent(code))
    with cluster.client() as client:
        submit_file(client, directory / "topology.py", cluster.client_conf(), name=name)
        return topology_id(client, name), record


def kill(cluster, name: str) -> None:
    """What `squall kill NAME -w 0` asks (a topology already gone is fine)."""
    with cluster.client() as client, contextlib.suppress(T.NotAliveException):
        client.killTopologyWithOpts(name, T.KillOptions(wait_secs=0))


def supervisor_errors(cluster, tid: str) -> list[str]:
    with cluster.client() as client:
        errors = client.getTopologyInfo(tid).errors or {}
    return [e.error for e in errors.get("__supervisor", [])]


def children(record: Path) -> list[tuple[int, int]]:
    """(worker pid, escaped child pid), oldest first."""
    if not record.exists():
        return []
    lines = record.read_text().splitlines()
    return [(int(w), int(c)) for w, c in (line.split() for line in lines if line.strip())]


def alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
        return Path(f"/proc/{pid}/stat").read_text().rpartition(")")[2].split()[0] != "Z"
    except (ProcessLookupError, FileNotFoundError):
        return False


def worker_cgroup(pid: int) -> list[str]:
    """The squall worker cgroups `pid` is in, one per hierarchy."""
    lines = Path(f"/proc/{pid}/cgroup").read_text().splitlines()
    return [line for line in lines if "/worker-" in line]


def escaped_child(record: Path, after: int = 0) -> tuple[int, int]:
    """The first child recorded after the first `after`, once it is alive."""
    found = wait_for(
        lambda: [c for c in children(record)[after:] if alive(c[1])],
        120,
        "the component's escaped child",
    )
    return found[0]


def test_a_setsid_child_counts_against_its_workers_memory_limit(cluster, tmp_path):
    tid, record = submit(cluster, tmp_path / "hog", "hog", child_mb=800)
    try:
        worker, child = escaped_child(record)
        assert os.getsid(child) != os.getsid(worker)  # it left the worker's session
        text = f"worker exceeded its memory limit of {LIMIT_MB} MB"
        wait_for(
            lambda: [e for e in supervisor_errors(cluster, tid) if text in e],
            120,
            "the worker stopped for its escaped child's memory",
        )
        wait_for(lambda: not alive(child), 30, "the memory-hungry child killed")
    finally:
        kill(cluster, "hog")


def test_a_setsid_child_dies_with_its_worker_and_with_squall_kill(cluster, tmp_path):
    tid, record = submit(cluster, tmp_path / "sleeper", "sleeper", child_mb=20)
    try:
        worker, child = escaped_child(record)
        assert os.getsid(child) != os.getsid(worker)
        assert worker_cgroup(child) and worker_cgroup(child) == worker_cgroup(worker)
        assert tid in worker_cgroup(child)[0]

        os.kill(worker, signal.SIGKILL)  # the worker dies; the supervisor reaps it
        wait_for(lambda: not alive(child), 60, "the child of the killed worker killed")

        worker, child = escaped_child(record, after=1)  # the restarted worker's
        kill(cluster, "sleeper")
        wait_for(lambda: not alive(child), 60, "the child killed with its topology")
        assert not alive(worker)
    finally:
        kill(cluster, "sleeper")


def test_a_restarted_supervisor_ends_what_a_dead_run_left_in_its_cgroups(tmp_path):
    """A supervisor SIGKILLed leaves its workers' cgroups, children in them; the next run
    with its id ends every process in them and removes them, before starting anything."""
    dead = Launcher(tmp_path, "cgroup-test-restart", "127.0.0.1", {})
    assert dead.cgroups is not None
    group = dead.cgroups.create("worker-gone-6700", Limits(64 << 20, None))
    escaped = subprocess.Popen(["sleep", "600"], start_new_session=True, stdin=subprocess.DEVNULL)
    try:
        dead.cgroups.enter(group, escaped.pid)
        restarted = Launcher(tmp_path, "cgroup-test-restart", "127.0.0.1", {})
        restarted.kill_strays()
        assert escaped.wait(30) == -signal.SIGKILL
        assert not any(d.exists() for d in group.dirs.values())
        restarted.stop_all()
        assert not any(d.exists() for d in restarted.cgroups.base.values())
    finally:
        escaped.kill()
        escaped.wait()
        dead.cgroups.end(group)
        dead.cgroups.close()


def test_a_setsid_child_dies_when_its_supervisor_is_killed(tmp_path):
    """kill -9 of the supervisor: its worker exits as an orphan and, on its way out, kills
    what it forked (worker/orphan_cleanup.py), instead of leaving it to the next run."""
    with LocalCluster(tmp_path / "cluster", supervisors=1, slots_per_supervisor=1) as cluster:
        submit(cluster, tmp_path / "orphan", "orphan", child_mb=20)
        worker, child = escaped_child(tmp_path / "orphan" / "children.txt")
        supervisor = cluster.processes["supervisor1"]
        supervisor.kill()  # SIGKILL
        supervisor.wait()
        wait_for(lambda: not alive(worker), 60, "the orphaned worker gone")
        wait_for(lambda: not alive(child), 30, "its setsid child killed with it")
