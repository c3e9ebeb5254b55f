"""Mutation testing of squall's decision modules: would the unit tests notice a one-line change?

For each module in TARGETS, every mutant (one small change made with `ast`) runs the unit tests
that import the module, in a fresh process that loads the mutated source in place of the module
through an import hook. A mutant the tests fail on is killed; one they pass with survived, and its
file:line and change tell a developer which test is missing.

Why our own script and not mutmut: our package layout maps squall.nimbus -> nimbus/,
squall.worker -> worker/ (pyproject's package-dir), which mutmut 3 handles badly (it copies the
tree into mutants/ and imports the wrong files); this script needs nothing but the repository.

Correctness before speed:
- No file on disk ever changes: the mutant reaches the test process on its stdin and is
  compiled in memory, so the tree stays safe for others using it, a killed run leaves nothing
  to repair, and mutants may run side by side (--jobs, at most 2: the machine has 2 cores).
- A run whose tests never import the target is an error, not a survivor.
- Hypothesis runs with a fixed seed so a score is repeatable.
- A module's tests are every tests/unit/test_*.py that imports it (any import form, read with
  `ast`), never a hand-kept list that falls behind; a target no test imports is an error.
  With --via-importers, also those importing a module of the package that imports it (one
  step, relative imports included: decide.py's tests for reassign.py), for a survivor that
  only a caller's tests would kill.

Run: .venv/bin/python bench/mutation.py [MODULE...] [--max-per-module N] [--jobs N] [--list]
     [--markdown] [--via-importers]
"""

from __future__ import annotations

import argparse
import ast
import contextlib
import copy
import importlib.abc
import importlib.util
import os
import platform
import random
import signal
import subprocess
import sys
import threading
import time
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from datetime import date
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent

# The decision modules: pure functions and frozen state machines, no I/O. Add one here; its
# unit tests are found, not listed (see tests_of).
TARGETS: tuple[str, ...] = (
    "nimbus/core/decide.py",
    "nimbus/core/reassign.py",
    "nimbus/core/model.py",
    "nimbus/core/heartbeats.py",
    "nimbus/core/states.py",
    "nimbus/scheduling/scheduler.py",
    "nimbus/scheduling/cluster_scheduler.py",
    "nimbus/scheduling/resource_fit.py",
    "nimbus/scheduling/scheduling_priority.py",
    "nimbus/scheduling/constraint_solver.py",
    "nimbus/core/coordinator_log.py",
    "nimbus/scheduling/schedule_invariants.py",
    "nimbus/scheduling/blacklist.py",
    "supervisor/slot.py",
    "supervisor/sync.py",
    "worker/lifecycle.py",
    "squall/liveness.py",
    "squall/recipes/ownership.py",
    "squall/recipes/offsets.py",
    "squall/source_partitions.py",
    "worker/spout_tracking.py",
    "worker/anchoring.py",
    "worker/acker.py",
    "worker/micro_batches.py",
    "worker/acking.py",
    "worker/stall.py",
    "worker/error_throttle.py",
    "worker/root_cause.py",
)

# where the unit tests of a target are looked for: every file here that imports it
UNIT_TESTS = "tests/unit/test_*.py"

# pyproject's package-dir: the folder each import package is installed from
PACKAGE_DIRS = {
    "squall": "squall",
    "nimbus": "squall.nimbus",
    "supervisor": "squall.supervisor",
    "worker": "squall.worker",
}

PYTEST = ("-x", "-q", "-p", "no:cacheprovider", "--hypothesis-seed=0")
LOG_NAMES = {"log", "logger", "logging", "LOG", "_log", "_logger"}
LOG_LEVELS = {"debug", "info", "warning", "warn", "error", "exception", "critical", "log"}

KEPT_STATEMENTS = (ast.Pass, ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef) + (
    ast.Import,
    ast.ImportFrom,
    ast.Global,
    ast.Nonlocal,
)
COMPARE_SWAPS: dict[type, tuple[type, ...]] = {
    ast.Lt: (ast.LtE, ast.GtE),
    ast.LtE: (ast.Lt, ast.Gt),
    ast.Gt: (ast.GtE, ast.LtE),
    ast.GtE: (ast.Gt, ast.Lt),
    ast.Eq: (ast.NotEq,),
    ast.NotEq: (ast.Eq,),
    ast.Is: (ast.IsNot,),
    ast.IsNot: (ast.Is,),
    ast.In: (ast.NotIn,),
    ast.NotIn: (ast.In,),
}
BINOP_SWAPS: dict[type, type] = {
    ast.Add: ast.Sub,
    ast.Sub: ast.Add,
    ast.Mult: ast.FloorDiv,
    ast.Div: ast.Mult,
    ast.FloorDiv: ast.Mult,
    ast.Mod: ast.FloorDiv,
    ast.Pow: ast.Mult,
    ast.BitXor: ast.BitOr,
    ast.BitOr: ast.BitAnd,
    ast.BitAnd: ast.BitOr,
    ast.LShift: ast.RShift,
    ast.RShift: ast.LShift,
}


@dataclass(frozen=True)
class Mutant:
    """One change: the bytes [start, end) of the file replaced by `new`."""

    path: str
    line: int
    start: int
    end: int
    old: str
    new: str

    def apply(self, source: bytes) -> bytes:
        return source[: self.start] + self.new.encode() + source[self.end :]

    def describe(self) -> str:
        old = " ".join(self.old.split())
        old = old if len(old) <= 70 else old[:67] + "..."
        new = self.new[1:-1] if self.new.startswith("(") else self.new
        return f"{self.path}:{self.line}: `{old}` -> `{new}`"


# --- generating mutants -------------------------------------------------------------------


def _is_docstring(stmt: ast.stmt) -> bool:
    return (
        isinstance(stmt, ast.Expr)
        and isinstance(stmt.value, ast.Constant)
        and isinstance(stmt.value.value, str)
    )


def _is_logging(stmt: ast.stmt) -> bool:
    if not (isinstance(stmt, ast.Expr) and isinstance(stmt.value, ast.Call)):
        return False
    func = stmt.value.func
    return (
        isinstance(func, ast.Attribute)
        and func.attr in LOG_LEVELS
        and isinstance(func.value, ast.Name)
        and func.value.id in LOG_NAMES
    )


def _is_type_alias(value: ast.expr) -> bool:
    """`Event = A | B | None`: a union of names is a type, not a computation."""
    if isinstance(value, ast.BinOp) and isinstance(value.op, ast.BitOr):
        return _is_type_alias(value.left) and _is_type_alias(value.right)
    return isinstance(value, (ast.Name, ast.Attribute, ast.Subscript)) or (
        isinstance(value, ast.Constant) and value.value is None
    )


def _is_all(stmt: ast.stmt) -> bool:
    targets = stmt.targets if isinstance(stmt, ast.Assign) else []
    return any(isinstance(t, ast.Name) and t.id == "__all__" for t in targets)


class _Collector(ast.NodeVisitor):
    """Walks one module and records (node, replacement text) for every mutation."""

    def __init__(self) -> None:
        self.found: list[tuple[ast.AST, str]] = []
        self.in_function = False

    def add(self, node: ast.AST, new: str) -> None:
        self.found.append((node, new))

    def add_expr(self, node: ast.expr, mutated: ast.expr) -> None:
        self.add(node, f"({ast.unparse(mutated)})")

    # statements -------------------------------------------------------------------------

    def visit_body(self, body: list[ast.stmt]) -> None:
        for index, stmt in enumerate(body):
            if (index == 0 and _is_docstring(stmt)) or _is_logging(stmt) or _is_all(stmt):
                continue
            # `return x` -> `pass` would mostly repeat `return x` -> `return None`
            removable = not isinstance(stmt, KEPT_STATEMENTS) and not (
                isinstance(stmt, ast.Return) and stmt.value is not None
            )
            if self.in_function and removable:
                self.add(stmt, "pass")
            self.visit(stmt)

    def generic_visit(self, node: ast.AST) -> None:
        for name, value in ast.iter_fields(node):
            if isinstance(value, list) and value and isinstance(value[0], ast.stmt):
                self.visit_body(value)
            elif isinstance(value, list):
                for item in value:
                    if isinstance(item, ast.AST):
                        self.visit(item)
            elif isinstance(value, ast.AST) and name not in ("annotation", "returns"):
                self.visit(value)

    def visit_Module(self, node: ast.Module) -> None:
        self.visit_body(node.body)

    def visit_FunctionDef(self, node: ast.FunctionDef | ast.AsyncFunctionDef) -> None:
        """Decorators and annotations are declarations; defaults and the body are behaviour."""
        for default in node.args.defaults + [d for d in node.args.kw_defaults if d]:
            self.visit(default)
        outer, self.in_function = self.in_function, True
        self.visit_body(node.body)
        self.in_function = outer

    visit_AsyncFunctionDef = visit_FunctionDef

    def visit_ClassDef(self, node: ast.ClassDef) -> None:
        outer, self.in_function = self.in_function, False
        self.visit_body(node.body)
        self.in_function = outer

    def visit_Assign(self, node: ast.Assign) -> None:
        if not _is_type_alias(node.value):
            self.visit(node.value)

    def visit_AnnAssign(self, node: ast.AnnAssign) -> None:
        if node.value is not None:
            self.visit(node.value)

    def visit_AugAssign(self, node: ast.AugAssign) -> None:
        swap = BINOP_SWAPS.get(type(node.op))
        if swap:
            mutated = copy.deepcopy(node)
            mutated.op = swap()
            self.add(node, ast.unparse(mutated))
        self.visit(node.value)

    def visit_Raise(self, node: ast.Raise) -> None:
        """Nothing inside a raise (its message) is mutated; removing the raise is."""

    def visit_Return(self, node: ast.Return) -> None:
        if node.value is not None and not (
            isinstance(node.value, ast.Constant) and node.value.value is None
        ):
            self.add(node.value, "None")
            self.visit(node.value)

    def visit_If(self, node: ast.If) -> None:
        for constant in ("True", "False"):
            self.add(node.test, constant)
        self.generic_visit(node)

    def visit_Break(self, node: ast.Break) -> None:
        self.add(node, "continue")

    def visit_Continue(self, node: ast.Continue) -> None:
        self.add(node, "break")

    def visit_match_case(self, node: ast.match_case) -> None:
        if node.guard is not None:
            self.visit(node.guard)
        self.visit_body(node.body)

    # expressions -----------------------------------------------------------------------

    def visit_JoinedStr(self, node: ast.JoinedStr) -> None:
        """f-strings are messages, and their inner positions are unreliable before 3.12."""

    def visit_Compare(self, node: ast.Compare) -> None:
        for index, op in enumerate(node.ops):
            for swap in COMPARE_SWAPS.get(type(op), ()):
                mutated = copy.deepcopy(node)
                mutated.ops[index] = swap()
                self.add_expr(node, mutated)
        self.generic_visit(node)

    def visit_BoolOp(self, node: ast.BoolOp) -> None:
        mutated = copy.deepcopy(node)
        mutated.op = ast.Or() if isinstance(node.op, ast.And) else ast.And()
        self.add_expr(node, mutated)
        self.generic_visit(node)

    def visit_UnaryOp(self, node: ast.UnaryOp) -> None:
        if isinstance(node.op, ast.Not):
            self.add_expr(node, node.operand)
        self.generic_visit(node)

    def visit_BinOp(self, node: ast.BinOp) -> None:
        swap = BINOP_SWAPS.get(type(node.op))
        if swap:
            mutated = copy.deepcopy(node)
            mutated.op = swap()
            self.add_expr(node, mutated)
        self.generic_visit(node)

    def visit_Constant(self, node: ast.Constant) -> None:
        value = node.value
        if isinstance(value, bool):
            self.add(node, str(not value))
        elif isinstance(value, int):
            self.add(node, str({0: 1, 1: 0}.get(value, value + 1)))


def _line_starts(source: bytes) -> list[int]:
    starts = [0]
    for line in source.splitlines(keepends=True):
        starts.append(starts[-1] + len(line))
    return starts


def generate(path: str, source: bytes) -> list[Mutant]:
    """Every mutant of `source` that compiles and differs from it, in file order."""
    collector = _Collector()
    collector.visit(ast.parse(source))
    starts = _line_starts(source)
    mutants: dict[bytes, Mutant] = {}
    for node, new in collector.found:
        start = starts[node.lineno - 1] + node.col_offset
        end = starts[node.end_lineno - 1] + node.end_col_offset
        old = source[start:end].decode()
        mutant = Mutant(path, node.lineno, start, end, old, new)
        mutated = mutant.apply(source)
        if mutated == source or mutated in mutants:
            continue
        try:
            compile(mutated, path, "exec")
        except SyntaxError:
            continue
        mutants[mutated] = mutant
    return sorted(mutants.values(), key=lambda m: (m.start, m.end, m.new))


def sample(mutants: list[Mutant], most: int | None, seed: int) -> list[Mutant]:
    if most is None or len(mutants) <= most:
        return mutants
    chosen = random.Random(seed).sample(mutants, most)
    return sorted(chosen, key=lambda m: (m.start, m.end, m.new))


# --- running them -------------------------------------------------------------------------

NOT_IMPORTED = 96  # the test process's exit code when its tests never imported the target


@dataclass(frozen=True)
class Outcome:
    mutant: Mutant
    status: str  # "killed", "survived" or "timeout"


def module_name(path: str) -> str:
    """The import name of a module file: nimbus/core/decide.py -> squall.nimbus.core.decide."""
    parts = list(Path(path).with_suffix("").parts)
    if parts[0] not in PACKAGE_DIRS:
        raise ValueError(f"{path}: not under a package folder ({', '.join(PACKAGE_DIRS)})")
    parts[:1] = PACKAGE_DIRS[parts[0]].split(".")
    if parts[-1] == "__init__":
        parts.pop()
    return ".".join(parts)


class MutantLoader(importlib.abc.MetaPathFinder, importlib.abc.Loader):
    """Answers the import of one module with the given source, ahead of every other finder."""

    def __init__(self, name: str, path: Path, source: bytes) -> None:
        self.name, self.path, self.source = name, path, source
        self.loaded = False

    def find_spec(self, fullname, target_path=None, target=None):  # importlib's signature
        if fullname != self.name:
            return None
        package = self.path.name == "__init__.py"
        spec = importlib.util.spec_from_file_location(
            fullname,
            self.path,
            loader=self,
            submodule_search_locations=[str(self.path.parent)] if package else None,
        )
        return spec

    def create_module(self, spec):  # the default module object
        return None

    def exec_module(self, module) -> None:
        self.loaded = True
        exec(compile(self.source, str(self.path), "exec"), module.__dict__)


def run_child(name: str, path: str, tests: list[str]) -> int:
    """In the test process: load stdin's source as module `name`, run the tests."""
    import pytest

    if sys.path and Path(sys.path[0]).resolve() == ROOT / "bench":
        sys.path.pop(0)  # bench/'s scripts must not shadow anything the tests import
    # `import squall` puts its own finder first on the meta path (hot_path.select: the per-tuple
    # modules from their sources, not their compiled extensions): the mutant's goes before it
    import squall  # noqa: F401

    loader = MutantLoader(name, Path(path).resolve(), sys.stdin.buffer.read())
    sys.meta_path.insert(0, loader)
    rc = pytest.main([*PYTEST, *tests])
    return int(rc) if loader.loaded else NOT_IMPORTED


_running: set[int] = set()  # process groups of the test runs under way
_running_lock = threading.Lock()


def run_tests(
    path: str, source: bytes, tests: tuple[str, ...], timeout: float
) -> tuple[str, float]:
    """(status, seconds) of the tests with `source` in place of the module at `path`:
    "survived" if they pass, "killed" if not, "timeout", or "not imported"."""
    command = (
        sys.executable,
        str(Path(__file__).resolve()),
        "--child",
        module_name(path),
        str(ROOT / path),
    )
    started = time.monotonic()
    with subprocess.Popen(
        (*command, *tests),
        cwd=ROOT,
        stdin=subprocess.PIPE,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
        start_new_session=True,
        # interpreted: compiled neighbours would call the original module in C, past the mutant
        env={**os.environ, "SQUALL_PURE": "1"},
    ) as proc:
        with _running_lock:
            _running.add(proc.pid)
        try:
            proc.communicate(source, timeout=timeout)
        except BaseException as error:  # a timeout, or our own interruption
            os.killpg(proc.pid, signal.SIGKILL)
            proc.wait()
            if isinstance(error, subprocess.TimeoutExpired):
                return "timeout", time.monotonic() - started
            raise
        finally:
            with _running_lock:
                _running.discard(proc.pid)
    seconds = time.monotonic() - started
    if proc.returncode == NOT_IMPORTED:
        return "not imported", seconds
    return ("survived" if proc.returncode == 0 else "killed"), seconds


def _kill_running() -> None:
    with _running_lock:
        for pid in list(_running):
            with contextlib.suppress(ProcessLookupError):
                os.killpg(pid, signal.SIGKILL)


def run_all(
    plan: dict[str, list[Mutant]], tests: dict[str, tuple[str, ...]], jobs: int, progress: bool
) -> dict[str, list[Outcome]]:
    """Each module's clean run, then every mutant, `jobs` test processes at a time."""
    sources = {path: (ROOT / path).read_bytes() for path in plan}
    with ThreadPoolExecutor(max_workers=jobs) as pool:
        try:
            clean = {
                path: pool.submit(run_tests, path, sources[path], tests[path], 600) for path in plan
            }
            timeouts = {}
            for path, future in clean.items():
                status, seconds = future.result()
                if status != "survived":
                    named = " ".join(tests[path])
                    raise SystemExit(f"{path}: its tests {named} {status} unmutated")
                timeouts[path] = max(10.0, 5 * seconds)
            done = [0]
            total = sum(map(len, plan.values()))

            def one(mutant: Mutant) -> Outcome:
                path = mutant.path
                status, _ = run_tests(
                    path, mutant.apply(sources[path]), tests[path], timeouts[path]
                )
                if status == "not imported":
                    raise RuntimeError(f"{path}: a mutant was not imported")
                with _running_lock:
                    done[0] += 1
                    if progress:
                        line = f"  [{done[0]}/{total}] {status:8} {mutant.describe()}"
                        print(line, file=sys.stderr, flush=True)
                return Outcome(mutant, status)

            futures = {path: [pool.submit(one, m) for m in plan[path]] for path in plan}
            return {path: [f.result() for f in futures[path]] for path in plan}
        except BaseException:
            pool.shutdown(wait=False, cancel_futures=True)
            _kill_running()
            raise


class UntestedTarget(ValueError):
    """A target with no unit test importing it (or no file): its mutants could only survive."""


def imported_names(source: bytes, package: str | None = None) -> set[str]:
    """Every module an import statement of `source` may name: `import a.b` gives a.b,
    `from a.b import c` gives a.b and a.b.c (c may be a module or a name in a.b). Relative
    imports count where `package` (the importing module's package) is given."""
    names: set[str] = set()
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.Import):
            names.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom):
            module = _from_module(node, package)
            if module:
                names.add(module)
                names.update(f"{module}.{alias.name}" for alias in node.names)
    return names


def _from_module(node: ast.ImportFrom, package: str | None) -> str | None:
    """The absolute name of the module a `from ... import` names (None: a relative import
    read without its package)."""
    if not node.level:
        return node.module
    if package is None:
        return None
    parts = package.split(".")
    base = parts[: len(parts) - node.level + 1]
    return ".".join([*base, node.module] if node.module else base)


def package_imports() -> dict[str, set[str]]:
    """{module of the package folders (PACKAGE_DIRS): the names its imports may name}."""
    imports = {}
    for folder in PACKAGE_DIRS:
        for path in sorted((ROOT / folder).rglob("*.py")):
            module = module_name(path.relative_to(ROOT).as_posix())
            package = module if path.stem == "__init__" else module.rpartition(".")[0]
            imports[module] = imported_names(path.read_bytes(), package)
    return imports


def importers(name: str, imports: dict[str, set[str]]) -> set[str]:
    """The modules of `imports` (package_imports) that import module `name`."""
    return {module for module, names in imports.items() if module != name and name in names}


def tests_of(
    modules: list[str] | tuple[str, ...], via_importers: bool = False
) -> dict[str, tuple[str, ...]]:
    """{module file: the unit-test files that import it}, found by reading every test file's
    imports, so a new test counts at once and none is forgotten; UntestedTarget names each
    module that is missing or that no test imports. With `via_importers`, also the test files
    that import a module importing it (one step: decide.py's tests for reassign.py)."""
    found = {
        test.relative_to(ROOT).as_posix(): imported_names(test.read_bytes())
        for test in sorted(ROOT.glob(UNIT_TESTS))
    }
    imports = package_imports() if via_importers else {}  # read once for every target
    tests: dict[str, tuple[str, ...]] = {}
    problems: list[str] = []
    for path in modules:
        name = module_name(path)
        wanted = {name, *importers(name, imports)}
        tests[path] = tuple(test for test, names in found.items() if wanted & names)
        if not (ROOT / path).is_file():
            problems.append(f"{path}: no such file")
        elif not tests[path]:
            problems.append(f"{path}: no file {UNIT_TESTS} imports {name}")
    if problems:
        raise UntestedTarget("; ".join(problems))
    return tests


# --- reporting ----------------------------------------------------------------------------


def _counts(outcomes: list[Outcome]) -> tuple[int, int, int, int, str]:
    killed = sum(o.status == "killed" for o in outcomes)
    survived = sum(o.status == "survived" for o in outcomes)
    timeout = sum(o.status == "timeout" for o in outcomes)
    total = len(outcomes)
    score = f"{100 * (killed + timeout) / total:.1f}" if total else "-"
    return total, killed, survived, timeout, score


def _machine() -> str:
    model = platform.processor() or platform.machine()
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                model = line.split(":", 1)[1].strip()
                break
    except OSError:
        pass
    return f"{os.cpu_count()} cores (nproc), {model}, Python {platform.python_version()}"


def report(results: dict[str, list[Outcome]], markdown: bool) -> str:
    rows = [(path, *_counts(outcomes)) for path, outcomes in results.items()]
    every = [o for outcomes in results.values() for o in outcomes]
    rows.append(("total", *_counts(every)))
    survivors = [o.mutant.describe() for o in every if o.status == "survived"]
    head = ("module", "mutants", "killed", "survived", "timed out", "score %")
    if markdown:
        lines = [f"Date: {date.today().isoformat()}. Machine: {_machine()}.", ""]
        lines += ["| " + " | ".join(head) + " |", "|" + "---|" * len(head)]
        lines += ["| " + " | ".join(str(c) for c in row) + " |" for row in rows]
        lines += ["", "Survivors:", ""] + [f"- {s}" for s in survivors]
    else:
        lines = ["{:<32}{:>8}{:>8}{:>10}{:>11}{:>9}".format(*head)]
        lines += ["{:<32}{:>8}{:>8}{:>10}{:>11}{:>9}".format(*row) for row in rows]
        lines += ["", f"survivors ({len(survivors)}):"] + [f"  {s}" for s in survivors]
    return "\n".join(lines)


def _raise_on_sigterm(signum: int, frame: object) -> None:
    raise SystemExit(128 + signum)


def main(argv: list[str] | None = None) -> int:
    argv = sys.argv[1:] if argv is None else argv
    if argv[:1] == ["--child"]:  # a test process started by run_tests
        return run_child(argv[1], argv[2], argv[3:])
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument(
        "modules", nargs="*", help=f"entries of TARGETS (default all): {', '.join(TARGETS)}"
    )
    parser.add_argument("--max-per-module", type=int, help="sample at most N mutants per module")
    parser.add_argument("--seed", type=int, default=0, help="seed of that sample")
    parser.add_argument(
        "--jobs", type=int, default=2, choices=(1, 2), help="test processes at once (default 2)"
    )
    parser.add_argument(
        "--via-importers",
        action="store_true",
        help="also run the tests of the modules that import a target (slower, fewer misses)",
    )
    parser.add_argument("--list", action="store_true", help="show the mutants, run nothing")
    parser.add_argument("--markdown", action="store_true", help="print the table for RESULTS.md")
    parser.add_argument("--quiet", action="store_true", help="no line per mutant on stderr")
    args = parser.parse_args(argv)
    unknown = [m for m in args.modules if m not in TARGETS]
    if unknown:
        parser.error(f"not in TARGETS: {', '.join(unknown)}")
    try:
        tests = tests_of(args.modules or TARGETS, args.via_importers)
    except UntestedTarget as error:
        parser.error(str(error))
    plan = {
        m: sample(generate(m, (ROOT / m).read_bytes()), args.max_per_module, args.seed)
        for m in tests
    }
    if args.list:
        for mutants in plan.values():
            print("\n".join(m.describe() for m in mutants))
        return 0
    previous = signal.signal(signal.SIGTERM, _raise_on_sigterm)
    try:
        results = run_all(plan, tests, args.jobs, not args.quiet)
    finally:
        signal.signal(signal.SIGTERM, previous)
    print(report(results, args.markdown))
    return 0


if __name__ == "__main__":
    sys.exit(main())
