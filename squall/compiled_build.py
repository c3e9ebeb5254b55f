"""An optional build of squall with its per-tuple path compiled by mypyc (issue #16).

    python -m squall.compiled_build build/compiled        # or: make compiled
    PYTHONPATH=$PWD/build/compiled squall supervisor ...   # its workers inherit it

The per-tuple path (emit, routing, anchoring, the acker, the executors' turns, the queues,
the transport between workers) is plain Python whose profile is flat: no line above 3% of a
worker's time, nothing left to fix in one place. mypyc compiles these modules, unchanged,
from their type hints: classes become C structs with typed attributes and direct method
calls. bench/RESULTS.md ("compiled per-tuple path") has what it gains.

The build is a copy of the imported squall package with HOT_PATH compiled in it, made next
to the sources, not over them: an editable checkout keeps running its .py files, and no
stale extension shadows an edit. The copy is whole, so a process with the build first on
its PYTHONPATH (nimbus and the UI too, if started so) imports every squall module from it,
of one version; `stale_files` says when the sources moved on. Daemons and workers start with
`python -P` (Python 3.11+), so the directory they start in cannot shadow the build. It needs
a C compiler, Python's headers and the `compiled` extra (mypy's mypyc);
tests/integration/test_compiled_build.py runs the path's unit tests and a cluster on it.

What changes under the build: compiled functions have no Python frames, so a stall report or
the sampling profiler shows user code and the threads' waits, not the executor's own lines;
values crossing a compiled signature are checked against its hints (an `emit` whose
direct_task is a numpy integer, not an int, raises TypeError).

What mypyc asks of these modules: type hints that check (`mypy` over them is clean), no
attribute redeclared with a narrower type in a subclass, no `__init__(*args, **kwargs)`
passed on to a compiled parent (executors.py's `_init_kind` hook instead), and no compiled
function set as a method of a class (worker/typed_tuples.py, which does, stays interpreted).
"""

from __future__ import annotations

import argparse
import importlib.util
import os
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

# The modules every tuple passes through in a worker with acking, and between workers
# (task_io.py hands executors the router's own methods: no code of its own per tuple).
HOT_PATH = (
    "squall.latency_histogram",
    "squall.worker.acker",
    "squall.worker.acker_executor",
    "squall.worker.acking",
    "squall.worker.anchoring",
    "squall.worker.bolt_executor",
    "squall.worker.codec",
    "squall.worker.compact_frames",
    "squall.worker.delivery",
    "squall.worker.emitting",
    "squall.worker.executor_group",
    "squall.worker.executors",
    "squall.worker.framing",
    "squall.worker.inbound",
    "squall.worker.latency",
    "squall.worker.locality",
    "squall.worker.outbox",
    "squall.worker.protocol_frames",
    "squall.worker.receive_queue",
    "squall.worker.receiver",
    "squall.worker.routing",
    "squall.worker.sender",
    "squall.worker.sender_outbox",
    "squall.worker.spout_executor",
    "squall.worker.spout_tracking",
    "squall.worker.task_stats",
    "squall.worker.transport",
)
# Packages that pyproject's package-dir maps from outside squall/ in a checkout.
SUBPACKAGES = ("nimbus", "supervisor", "worker")


class CompiledBuildError(RuntimeError):
    """The build could not be made (no compiler, no mypyc, code mypyc refuses)."""


def compile_hot_path(out: Path, modules: tuple[str, ...] = HOT_PATH) -> None:
    """Build squall at `out` with `modules` compiled by mypyc (C extensions beside their
    sources in the copy, which Python's import prefers). Made in a fresh directory beside
    `out` and swapped in whole: `out` holds the old build or the new one, never a copy left
    half made by a failure, which would run interpreted."""
    if importlib.util.find_spec("mypyc") is None:
        raise CompiledBuildError("mypyc is not installed: pip install 'squall[compiled]'")
    out = out.resolve()
    sources = package_sources()
    for source, _ in sources:
        if out.is_relative_to(source) or source.is_relative_to(out):
            raise CompiledBuildError(f"{out} overlaps squall's own files at {source}")
    out.parent.mkdir(parents=True, exist_ok=True)
    work = Path(tempfile.mkdtemp(prefix=f".{out.name}-", dir=out.parent))
    work.chmod(0o755)  # mkdtemp's 0700 would hide it from workers run as their submitters
    try:
        stage_package(work, sources)
        _compile(work, modules)
        for scratch in ("build", ".mypy_cache"):  # mypyc's objects and type cache
            shutil.rmtree(work / scratch, ignore_errors=True)
        if out.exists():
            old = Path(tempfile.mkdtemp(prefix=f".{out.name}-old-", dir=out.parent))
            out.rename(old / out.name)
            work.rename(out)
            shutil.rmtree(old)
        else:
            work.rename(out)
    finally:
        shutil.rmtree(work, ignore_errors=True)


def stale_files(out: Path) -> list[str]:
    """The files of the squall package this process imports whose copy in the build at `out`
    differs or is missing: a build older than an edit (or an upgrade) runs the old code in
    every process that uses it."""
    out = out.resolve()
    stale = []
    for source, relative in package_sources():
        if source.is_relative_to(out):
            raise CompiledBuildError(f"this process imports squall from {out} itself")
        for path in source.rglob("*"):
            if not path.is_file() or "__pycache__" in path.parts or path.suffix == ".so":
                continue
            copy = out / "squall" / relative / path.relative_to(source)
            if not copy.is_file() or copy.read_bytes() != path.read_bytes():
                stale.append(str(path))
    return stale


def stage_package(work: Path, sources: list[tuple[Path, Path]]) -> None:
    """A copy of the squall package at work/squall: symlinks resolved, the subpackages
    where a wheel puts them."""
    ignore = shutil.ignore_patterns("__pycache__", "*.so")
    for source, relative in sources:
        shutil.copytree(source, work / "squall" / relative, ignore=ignore, dirs_exist_ok=True)


def _compile(work: Path, modules: tuple[str, ...]) -> None:
    paths = [module.replace(".", "/") + ".py" for module in modules]
    done = subprocess.run(
        [sys.executable, "-m", "mypyc", "--ignore-missing-imports", *paths],
        cwd=work,
        capture_output=True,
        text=True,
        env={**os.environ, "PYTHONPATH": ""},  # mypy reads the staged copy, not a build
    )
    if done.returncode:
        lines = (done.stdout + done.stderr).splitlines()
        errors = [line for line in lines if "error" in line.lower()] or lines
        raise CompiledBuildError("mypyc failed:\n" + "\n".join(errors[-20:] or ["no output"]))
    missing = [m for m in modules if not is_compiled(work, m)]
    if missing:
        raise CompiledBuildError(f"mypyc wrote no extension for {', '.join(missing)}")


def package_sources() -> list[tuple[Path, Path]]:
    """The imported squall package's directories and where each goes in a wheel's layout:
    squall/ itself, and the subpackages that a checkout keeps outside it."""
    root = _package_dir("squall")
    found = [(root, Path("."))]
    for name in SUBPACKAGES:
        where = _package_dir(f"squall.{name}")
        if where != root / name:
            found.append((where, Path(name)))
    return found


def running_build() -> Path | None:
    """The compiled build this process runs its per-tuple path from, if any: a worker logs
    it at start, so an operator sees which code a worker runs."""
    module = sys.modules.get("squall.worker.emitting")
    where = getattr(module, "__file__", None) or ""
    return Path(where).parents[2] if where.endswith(".so") else None


def runs_build(pid: int, build: Path) -> bool:
    """Whether process `pid` has loaded the build's compiled code (one shared library at the
    build's top, whichever of its modules were imported)."""
    where = f"{build.resolve()}/"
    maps = Path(f"/proc/{pid}/maps").read_text().splitlines()
    return any(where in line and "__mypyc." in line for line in maps)


def is_compiled(out: Path, module: str) -> bool:
    """Whether the build at `out` holds `module` as a C extension."""
    *package, name = module.split(".")
    return any(out.joinpath(*package).glob(f"{name}.*.so"))


def _package_dir(package: str) -> Path:
    spec = importlib.util.find_spec(package)
    if spec is None or not spec.submodule_search_locations:
        raise CompiledBuildError(f"{package} is not an importable package")
    return Path(next(iter(spec.submodule_search_locations))).resolve()


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m squall.compiled_build", description=__doc__)
    parser.add_argument("out", type=Path, help="the build's directory, for PYTHONPATH")
    args = parser.parse_args(argv)
    try:
        compile_hot_path(args.out)
    except CompiledBuildError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 1
    print(f"compiled {len(HOT_PATH)} modules; use it with PYTHONPATH={args.out.resolve()}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
