"""squall's compiled build (squall.compiled_build, issue #16): mypyc compiles the per-tuple
path in a copy of the sources; the per-tuple path's unit tests pass against it, and a cluster
started with the build on PYTHONPATH runs workers whose processes load the compiled modules
and ack every tuple of a topology whose tuples and acks cross two workers."""

import os
import subprocess
import sys
from pathlib import Path

import pytest

from squall.compiled_build import (
    HOT_PATH,
    CompiledBuildError,
    compile_hot_path,
    is_compiled,
    runs_build,
    stale_files,
)
from squall.local import LocalCluster, topology_id, wait_until_quiet
from squall.submit import submit_file

from .conftest import TOPOLOGIES
from .topologies.acked_words import TOTAL

# mypyc's compile (a minute and a half on two cores) counts in the first test's time
pytestmark = pytest.mark.timeout(900)
ROOT = Path(__file__).parents[2]
# Not a build's business: the mutation script's test is about the checkout's own files.
NOT_OF_A_BUILD = {"test_mutation_script.py"}


def unit_tests_of_the_hot_path() -> list[Path]:
    """The unit test files that import a module of HOT_PATH (so new ones join by themselves)."""
    names = []
    for module in HOT_PATH:
        package, name = module.rsplit(".", 1)
        names += [module, f"from {package} import {name}"]
    return [
        path
        for path in sorted((ROOT / "tests" / "unit").glob("test_*.py"))
        if path.name not in NOT_OF_A_BUILD and any(n in path.read_text() for n in names)
    ]


# Runs pytest in a process whose squall.worker modules are the build's: imported before
# pytest, so every test module gets those (a .so each, or the run fails at once).
RUN_COMPILED = (
    "import sys, pytest, squall.worker.emitting as e; "
    "assert e.__file__.endswith('.so'), e.__file__; "
    "sys.exit(pytest.main(sys.argv[1:]))"
)


@pytest.fixture(scope="module")
def build(tmp_path_factory) -> Path:
    out = tmp_path_factory.mktemp("compiled")
    compile_hot_path(out)
    return out


def _with(build: Path) -> dict[str, str]:
    return {**os.environ, "PYTHONPATH": str(build)}


def test_the_build_holds_the_hot_path_compiled_and_the_sources_as_they_are(build, tmp_path):
    assert all(is_compiled(build, module) for module in HOT_PATH)
    assert stale_files(build) == []
    assert build.stat().st_mode & 0o777 == 0o755  # readable by workers of other users
    where = subprocess.run(
        [sys.executable, "-c", "import squall.worker.acker as a; print(a.__file__)"],
        env=_with(build),
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=60,
        check=True,
    ).stdout.strip()
    assert Path(where).is_relative_to(build) and where.endswith(".so")
    (tmp_path / "edited.py").write_text("# an edit the build has not seen\n")
    assert stale_files(tmp_path) != []  # not a build of these sources: every file differs


def test_a_build_over_squalls_own_files_is_refused_and_deletes_nothing():
    for out in (ROOT, ROOT / "worker" / "compiled"):
        with pytest.raises(CompiledBuildError, match="overlaps squall's own files"):
            compile_hot_path(out)
    assert (ROOT / "squall" / "__init__.py").is_file() and (ROOT / "worker").is_dir()
    assert not (ROOT / "worker" / "compiled").exists()


def test_the_per_tuple_paths_unit_tests_pass_against_the_build(build, tmp_path):
    tests = [str(path) for path in unit_tests_of_the_hot_path()]
    assert len(tests) > 15
    done = subprocess.run(
        [sys.executable, "-c", RUN_COMPILED, "-q", "-p", "no:cacheprovider"]
        + ["--import-mode=append", *tests],
        env=_with(build),
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert done.returncode == 0, done.stdout[-4000:] + done.stderr[-2000:]
    assert " passed" in done.stdout.splitlines()[-1]


def test_a_cluster_run_from_the_build_acks_every_tuple_across_two_workers(
    build, tmp_path, monkeypatch
):
    monkeypatch.setenv("PYTHONPATH", str(build))  # the daemons and so their workers
    with LocalCluster(tmp_path / "cluster", supervisors=1, slots_per_supervisor=2) as cluster:
        with cluster.client() as client:
            name = submit_file(client, TOPOLOGIES / "acked_words.py", cluster.client_conf())
            tid = topology_id(client, name)
        assert tid is not None
        progress = wait_until_quiet(cluster.base_conf_full(), tid, 120)
        assert progress["acked"] == TOTAL and progress["failed"] == 0
        pid_files = list(cluster.directory.glob("supervisor1/supervisor/workers/*.pid"))
        assert len(pid_files) == 2
        assert all(runs_build(int(pid_file.read_text()), build) for pid_file in pid_files)
        logs = list(cluster.directory.glob("supervisor1/supervisor/logs/worker-*.log"))
        assert len(logs) == 2
        for log in logs:
            assert f"per-tuple path compiled by mypyc, from {build}" in log.read_text()
