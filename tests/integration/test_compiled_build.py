"""The per-tuple path as installed (issues #16, #39): the install compiles HOT_PATH with mypyc
(setup.py, `make venv`), so this environment runs it compiled; an edit to one of its sources
runs every module of it from the sources, never an old extension; the path's unit tests also
pass interpreted (SQUALL_PURE=1); a cluster's workers load the compiled modules, ack every
tuple of a topology whose tuples and acks cross two workers, and say so in their start line.
Under SQUALL_PURE=1 (an environment built without mypyc) the compiled checks are skipped."""

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from squall.hot_path import HOT_PATH, PURE_ENV, runs_compiled
from squall.local import LocalCluster, topology_id, wait_until_quiet
from squall.package_layout import package_sources
from squall.submit import submit_file

from .conftest import TOPOLOGIES
from .topologies.acked_words import TOTAL

ROOT = Path(__file__).parents[2]
PURE = os.environ.get(PURE_ENV, "") not in ("", "0")
compiled_only = pytest.mark.skipif(PURE, reason=f"{PURE_ENV}=1: this environment runs sources")
# Not the per-tuple path's business (the checkout's files), or slow property runs that the
# suite makes compiled anyway: the interpreted run is the rest, about twenty seconds.
NOT_INTERPRETED = {
    "test_mutation_script.py",
    "test_reliability_properties.py",
    "test_codec_protocol.py",
    "test_codec.py",
}
SHOW_PATH = (
    "import importlib, squall.hot_path as h; print(h.describe()); "
    "print(*(importlib.import_module(m).__file__ for m in h.HOT_PATH))"
)


def unit_tests_of_the_hot_path() -> list[Path]:
    """The unit test files that import a module of HOT_PATH (so new ones join by themselves)."""
    names = []
    for module in HOT_PATH:
        package, name = module.rsplit(".", 1)
        names += [module, f"from {package} import {name}"]
    return [
        path
        for path in sorted((ROOT / "tests" / "unit").glob("test_*.py"))
        if path.name not in NOT_INTERPRETED and any(n in path.read_text() for n in names)
    ]


def _path_of(env: dict[str, str], cwd: Path) -> tuple[str, list[str]]:
    """What a fresh process in `env` says it runs, and where its HOT_PATH modules came from."""
    done = subprocess.run(
        [sys.executable, "-c", SHOW_PATH],
        env=env,
        cwd=cwd,  # not the checkout
        capture_output=True,
        text=True,
        timeout=120,
        check=True,
    )
    described, files = done.stdout.splitlines()
    return described, files.split()


@compiled_only
def test_this_environment_runs_the_per_tuple_path_compiled(tmp_path):
    described, files = _path_of(dict(os.environ), tmp_path)
    assert described == "compiled (mypyc)", f"make venv compiles it again: {described}"
    assert len(files) == len(HOT_PATH) and all(f.endswith(".so") for f in files), files


@compiled_only
def test_an_edited_source_runs_every_per_tuple_module_from_the_sources(tmp_path):
    site = tmp_path / "site"  # this installation as a wheel lays it out: extensions, digests
    for source, relative in package_sources():
        ignore = shutil.ignore_patterns("__pycache__")
        shutil.copytree(source, site / "squall" / relative, ignore=ignore, dirs_exist_ok=True)
    env = {**os.environ, "PYTHONPATH": str(site)}
    described, files = _path_of(env, tmp_path)
    assert described == "compiled (mypyc)" and all(Path(f).is_relative_to(site) for f in files)
    edited = site / "squall" / "worker" / "routing.py"
    edited.write_text(edited.read_text() + "# an edit after the build\n")
    described, files = _path_of(env, tmp_path)
    assert described.startswith("interpreted: ") and str(edited) in described
    assert len(files) == len(HOT_PATH) and all(f.endswith(".py") for f in files), files
    described, files = _path_of({**env, PURE_ENV: "1"}, tmp_path)
    assert described == f"interpreted: {PURE_ENV}=1 is set"


# pytest in a process that runs the sources: imported before pytest, so every test module
# gets them (a .py each, or the run fails at once).
RUN_INTERPRETED = (
    "import sys, pytest, squall.worker.emitting as e; "
    "assert e.__file__.endswith('.py'), e.__file__; "
    "sys.exit(pytest.main(sys.argv[1:]))"
)


def test_the_per_tuple_paths_unit_tests_pass_interpreted(tmp_path):
    tests = [str(path) for path in unit_tests_of_the_hot_path()]
    assert len(tests) > 15
    done = subprocess.run(
        [sys.executable, "-c", RUN_INTERPRETED, "-q", "-p", "no:cacheprovider", *tests],
        env={**os.environ, PURE_ENV: "1"},
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert done.returncode == 0, done.stdout[-4000:] + done.stderr[-2000:]
    assert " passed" in done.stdout.splitlines()[-1]


@compiled_only
def test_a_cluster_runs_the_compiled_path_and_acks_every_tuple_across_two_workers(tmp_path):
    with LocalCluster(tmp_path / "cluster", supervisors=1, slots_per_supervisor=2) as cluster:
        with cluster.client() as client:
            name = submit_file(client, TOPOLOGIES / "acked_words.py", cluster.client_conf())
            tid = topology_id(client, name)
        assert tid is not None
        progress = wait_until_quiet(cluster.base_conf_full(), tid, 120)
        assert progress["acked"] == TOTAL and progress["failed"] == 0
        pid_files = list(cluster.directory.glob("supervisor1/supervisor/workers/*.pid"))
        assert len(pid_files) == 2
        assert all(runs_compiled(int(pid_file.read_text())) for pid_file in pid_files)
        logs = list(cluster.directory.glob("supervisor1/supervisor/logs/worker-*.log"))
        assert len(logs) == 2
        for log in logs:
            assert "per-tuple path compiled (mypyc)" in log.read_text()
