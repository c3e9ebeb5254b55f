"""The built wheel, not the editable install: `pip wheel` of a copy of the sources gives a
wheel with every package and its data files; installed into a fresh virtual environment
(dependencies from this one, offline, and no path back to the sources) its `squall nimbus`
and `squall supervisor` run a cluster whose workers run a topology. The wheel carries the
per-tuple path compiled by mypyc (setup.py), and the installed workers run it."""

import json
import os
import shutil
import subprocess
import sys
import sysconfig
import venv
import zipfile
from pathlib import Path

import pytest

from squall.hot_path import DIGESTS, HOT_PATH, PURE_ENV, runs_compiled
from squall.local import LocalCluster, wait_for
from squall.submit import submit_file

from .conftest import TOPOLOGIES
from .gated_run import running

# mypyc's compile in the wheel's build (a minute and a half on two cores, more under load)
# counts in the first test's time
pytestmark = pytest.mark.timeout(900)
ROOT = Path(__file__).parents[2]
SOURCES = ["pyproject.toml", "setup.py", "README.md", "squall", "nimbus", "supervisor", "worker"]
LINKED = ["conf", "thrift"]  # what squall/defaults.yaml and squall/squall.thrift point into
PACKAGE_DIRS = {"squall": "squall", "nimbus": "squall/nimbus", "supervisor": "squall/supervisor"}
PACKAGE_DIRS["worker"] = "squall/worker"
PURE = os.environ.get(PURE_ENV, "") not in ("", "0")  # an environment built without mypyc


@pytest.fixture(scope="module")
def wheel(tmp_path_factory) -> Path:
    """A wheel built from a copy of the sources (the build leaves nothing in the checkout),
    offline: setuptools and mypyc from this environment, no index (mypyc's minute and a half
    on two cores counts in the first test's time)."""
    tmp = tmp_path_factory.mktemp("wheel")
    src = tmp / "src"
    src.mkdir()
    for name in SOURCES + LINKED:
        path = ROOT / name
        if path.is_dir():
            ignore = shutil.ignore_patterns("__pycache__", "*.so", DIGESTS)  # not the venv's
            shutil.copytree(path, src / name, symlinks=True, ignore=ignore)
        else:
            shutil.copy2(path, src / name)
    pip = [sys.executable, "-m", "pip"]
    subprocess.run(
        [*pip, "wheel", "-q", "--no-deps", "--no-build-isolation", "--no-index", str(src)],
        cwd=tmp,
        check=True,
        timeout=900,
    )
    [built] = tmp.glob("squall-*.whl")
    return built


@pytest.fixture(scope="module")
def installed(wheel, tmp_path_factory) -> Path:
    """A fresh virtual environment with the wheel installed. Its dependencies come from this
    environment's site-packages through a .pth file; this environment's editable-install
    hook (a .pth in that directory) is not run from there, so squall comes from the wheel
    alone."""
    env = tmp_path_factory.mktemp("venv") / "env"
    venv.create(env, with_pip=False)
    python = env / "bin" / "python"
    site = subprocess.run(
        [python, "-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])"],
        capture_output=True,
        text=True,
        check=True,
    ).stdout.strip()
    deps = {sysconfig.get_paths()["purelib"], sysconfig.get_paths()["platlib"]}
    (Path(site) / "squall-test-deps.pth").write_text("\n".join(sorted(deps)) + "\n")
    subprocess.run(
        [
            sys.executable,
            "-m",
            "pip",
            "--python",
            str(python),
            "install",
            "-q",
            "--no-deps",
            "--no-index",
            str(wheel),
        ],
        check=True,
        timeout=300,
    )
    return env


def test_the_wheel_holds_every_package_and_its_data(wheel):
    names = set(zipfile.ZipFile(wheel).namelist())
    for top, package in PACKAGE_DIRS.items():
        for init in (ROOT / top).rglob("__init__.py"):
            relative = init.relative_to(ROOT / top).as_posix()
            assert f"{package}/{relative}" in names, f"{init.parent} is not in the wheel"
    archive = zipfile.ZipFile(wheel)
    for data in ("squall.thrift", "defaults.yaml"):  # links in the sources, files in the wheel
        assert archive.read(f"squall/{data}") == (ROOT / "squall" / data).read_bytes()
    for asset in (ROOT / "squall" / "ui" / "static").iterdir():  # the web UI's page
        assert f"squall/ui/static/{asset.name}" in names, f"{asset} is not in the wheel"
    assert (
        "squall = squall.cli:main"
        in archive.read(next(n for n in names if n.endswith("entry_points.txt"))).decode()
    )


@pytest.mark.skipif(PURE, reason=f"{PURE_ENV}=1: the wheel is built without mypyc")
def test_the_wheel_holds_the_per_tuple_path_compiled_beside_its_sources(wheel):
    names = zipfile.ZipFile(wheel).namelist()
    assert "-py3-none-any" not in wheel.name  # a platform's wheel: it holds extensions
    for module in HOT_PATH:
        where = module.replace(".", "/")
        assert f"{where}.py" in names
        assert any(n.startswith(f"{where}.") and n.endswith(".so") for n in names), module
    assert any(n.startswith("squall/hot_path__mypyc.") for n in names)
    digests = json.loads(zipfile.ZipFile(wheel).read(f"squall/{DIGESTS}"))
    assert sorted(digests) == sorted(HOT_PATH)


def test_squall_comes_from_the_wheel(installed, tmp_path):
    code = (
        "import squall, squall.nimbus.daemon, squall.supervisor.daemon, squall.worker.main, "
        "squall.recipes.owner, squall.config; print(squall.__file__); "
        "print(len(squall.config.cluster_conf()))"
    )
    result = subprocess.run(
        [installed / "bin" / "python", "-c", code],
        cwd=tmp_path,  # not the checkout: its squall/ must not be found
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert result.returncode == 0, result.stderr
    where, keys = result.stdout.split()
    assert Path(where).is_relative_to(installed) and int(keys) > 50
    help_text = subprocess.run(
        [installed / "bin" / "squall", "--help"], capture_output=True, text=True, timeout=60
    ).stdout
    assert {"nimbus", "supervisor", "submit"} <= set(help_text.split())


def test_nimbus_and_supervisor_from_the_wheel_run_a_topology(installed, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)  # the daemons and their workers run outside the checkout
    with LocalCluster(
        tmp_path / "cluster", supervisors=1, command=[str(installed / "bin" / "squall")]
    ) as cluster:
        with cluster.client() as client:
            name = submit_file(client, TOPOLOGIES / "tiny.py", cluster.client_conf())
            tid = next(t.id for t in client.getClusterInfo().topologies if t.name == name)
            wait_for(lambda: running(client, tid), 90, "every executor of tiny running")
        for process in cluster.processes.values():
            assert Path(f"/proc/{process.pid}/cmdline").read_bytes().split(b"\0")[1] == bytes(
                installed / "bin" / "squall"
            )
        pid_files = list(cluster.directory.glob("supervisor1/supervisor/workers/*.pid"))
        assert len(pid_files) == 2  # tiny's two workers
        for pid_file in pid_files:
            pid = int(pid_file.read_text())
            command = Path(f"/proc/{pid}/cmdline").read_bytes().split(b"\0")
            python = [bytes(installed / "bin" / "python")]
            python += [b"-P"] if sys.version_info >= (3, 11) else []  # not from its cwd
            assert command[: len(python) + 2] == [*python, b"-m", b"squall.worker"]
            assert Path(os.readlink(f"/proc/{pid}/cwd")) == tmp_path
            assert runs_compiled(pid) is not PURE
        path = "interpreted: " if PURE else "compiled (mypyc)"
        logs = list(cluster.directory.glob("supervisor1/supervisor/logs/worker-*.log"))
        assert len(logs) == 2
        assert all(f"per-tuple path {path}" in log.read_text() for log in logs)
