"""Which per-tuple path this process runs: the modules of HOT_PATH compiled by mypyc (C
extensions that the install built beside their sources, setup.py), or their Python sources.

The install compiles HOT_PATH where it can (a C compiler, Python's headers, mypy's mypyc at
build time; SQUALL_PURE=1 at install skips it) and records each source's digest in
squall/hot_path_build.json. Python's import prefers an extension over a .py of the same
name, so an extension older than its source would run the old code without a word: in an
editable checkout an edit would be ignored. So `select()`, run once at `import squall`,
chooses the sources for all of HOT_PATH when any of its sources differs from what was
compiled (the compiled modules call each other directly, in C: mixing an edited module's
source with its neighbours' old compiled code would run both), when SQUALL_PURE=1 is set,
or when the install compiled nothing. `make venv` (and so `make test`) compiles again after
an edit; `describe()` says which path runs and why, for `squall version` and each worker's
start line.

Stdlib only, and cheap (digests of 27 files, 190 KB: 1-4 ms): every process imports it.
"""

from __future__ import annotations

import hashlib
import importlib.machinery
import importlib.util
import json
import os
import sys
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from types import ModuleType

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
# The shared library of the compiled modules (mypyc's group), in the squall package.
GROUP = "squall.hot_path"
# Module name -> sha256 of the source it was compiled from, beside this file.
DIGESTS = "hot_path_build.json"
PURE_ENV = "SQUALL_PURE"


@dataclass(frozen=True)
class Choice:
    """The path this process runs, and why when it is not the compiled one."""

    compiled: bool
    reason: str = ""


def digest(path: Path) -> str:
    """A source file's digest as the build records it."""
    return hashlib.sha256(path.read_bytes()).hexdigest()


def choose(
    pure: bool, recorded: dict[str, str] | None, sources: dict[str, Path], extensions: set[str]
) -> Choice:
    """The path to run, from the opt-out, the build's digests (None: no build), the modules'
    sources and the modules that have an extension beside their source."""
    if pure:
        return Choice(False, f"{PURE_ENV}=1 is set")
    if recorded is None or not extensions:
        return Choice(False, "this installation has no compiled modules (built without mypyc)")
    for module in HOT_PATH:
        source = sources.get(module)
        if source is None or not source.is_file():
            return Choice(False, f"{module} has no source")
        if module not in extensions or recorded.get(module) != digest(source):
            return Choice(False, f"{source} changed since it was compiled (make venv compiles)")
    return Choice(True)


def _package_dirs() -> dict[str, Path]:
    """Where squall's and squall.worker's modules are, without importing squall.worker."""
    dirs = {}
    for package in {module.rpartition(".")[0] for module in HOT_PATH}:
        module = sys.modules.get(package)
        spec = None if module is not None else importlib.util.find_spec(package)
        locations: Sequence[str] = (
            list(getattr(module, "__path__", ()))
            if module is not None
            else list((spec.submodule_search_locations or []) if spec else [])
        )
        if locations:
            dirs[package] = Path(locations[0])
    return dirs


def _inspect() -> Choice:
    dirs = _package_dirs()
    sources, extensions = {}, set()
    for module in HOT_PATH:
        package, _, name = module.rpartition(".")
        if package not in dirs:
            continue
        sources[module] = dirs[package] / f"{name}.py"
        suffixes = importlib.machinery.EXTENSION_SUFFIXES
        if any((dirs[package] / f"{name}{suffix}").is_file() for suffix in suffixes):
            extensions.add(module)
    try:
        recorded = json.loads((Path(__file__).parent / DIGESTS).read_text())
    except (OSError, ValueError):
        recorded = None
    return choose(os.environ.get(PURE_ENV, "") not in ("", "0"), recorded, sources, extensions)


class _SourcesFirst:
    """A meta path finder that loads HOT_PATH's modules from their .py files, before the
    path finder would load the extensions beside them."""

    def find_spec(
        self, fullname: str, path: Sequence[str] | None, target: ModuleType | None = None
    ) -> importlib.machinery.ModuleSpec | None:
        if fullname not in HOT_PATH or not path:
            return None
        name = fullname.rpartition(".")[2]
        for directory in path:
            source = os.path.join(directory, f"{name}.py")
            if os.path.isfile(source):
                return importlib.util.spec_from_file_location(fullname, source)
        return None


_choice: Choice | None = None


def select() -> Choice:
    """Choose the path once per process (before any HOT_PATH module is imported): the
    sources run unless the compiled modules are there and of these sources."""
    global _choice
    if _choice is None:
        _choice = _inspect()
        if not _choice.compiled:
            sys.meta_path.insert(0, _SourcesFirst())
    return _choice


def describe() -> str:
    """One line on the path this process runs."""
    choice = select()
    if choice.compiled:
        return "compiled (mypyc)"
    return f"interpreted: {choice.reason}"


def runs_compiled(pid: int) -> bool:
    """Whether process `pid` has loaded the compiled modules' shared library."""
    maps = Path(f"/proc/{pid}/maps").read_text()
    return f"{GROUP.rpartition('.')[2]}__mypyc." in maps
