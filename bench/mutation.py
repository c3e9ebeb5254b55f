"""Mutation testing of squall's decision modules: would the unit tests notice a one-line change?

For each module in TARGETS, every mutant (one small change made with `ast`) is written over the
module in place, the module's unit tests run in a subprocess, and the original is put back. A
mutant the tests fail on is killed; one they pass with survived, and its file:line and change
tell a developer which test is missing.

Why our own script and not mutmut: our package layout maps squall.nimbus -> nimbus/,
squall.worker -> worker/ (pyproject's package-dir), which mutmut 3 handles badly (it copies the
tree into mutants/ and imports the wrong files); this script needs nothing but the repository.

Correctness before speed:
- Mutants run one at a time. Running two at once can clash even for different modules, since
  one module's tests import the other (test_acking imports the executors, which import acking).
- The original bytes and mtime are restored in a `finally` (SIGTERM is turned into SystemExit
  so that holds too); at the end every file is checked byte-identical to its original. A
  target with uncommitted changes is refused, so after a `kill -9` `git checkout -- FILE` is
  a safe repair.
- Tests run with PYTHONDONTWRITEBYTECODE=1, and the target's .pyc is removed before each
  mutant, so no stale .pyc of another version is ever imported.
- Hypothesis runs with a fixed seed so a score is repeatable.

Run: .venv/bin/python bench/mutation.py [MODULE...] [--max-per-module N] [--list] [--markdown]
"""

from __future__ import annotations

import argparse
import ast
import copy
import os
import platform
import random
import signal
import subprocess
import sys
import time
from dataclasses import dataclass
from datetime import date
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent

# (module file, the unit-test files that should kill its mutants). Add a decision module here.
TARGETS: dict[str, tuple[str, ...]] = {
    "nimbus/states.py": ("tests/unit/test_states.py",),
    "nimbus/heartbeats.py": ("tests/unit/test_heartbeats.py",),
    "nimbus/scheduler.py": ("tests/unit/test_scheduler.py",),
    "worker/acking.py": ("tests/unit/test_acking.py",),
}

PYTEST = ("-m", "pytest", "-x", "-q", "-p", "no:cacheprovider", "--hypothesis-seed=0")
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


@dataclass(frozen=True)
class Outcome:
    mutant: Mutant
    status: str  # "killed", "survived" or "timeout"


class Restorer:
    """Holds every target's original bytes and mtime, to write mutants over and put back."""

    def __init__(self, paths: list[Path]) -> None:
        self.originals = {p: (p.read_bytes(), p.stat().st_mtime_ns) for p in paths}

    def restore(self, path: Path) -> None:
        data, mtime = self.originals[path]
        path.write_bytes(data)
        os.utime(path, ns=(mtime, mtime))

    def write(self, path: Path, data: bytes) -> None:
        """Write a mutant, with an mtime apart from the original's, and drop the file's .pyc:
        a .pyc is trusted on (mtime in seconds, size), which two mutants can share."""
        mtime = self.originals[path][1] + 2_000_000_000
        for cached in (path.parent / "__pycache__").glob(f"{path.stem}.*.pyc"):
            cached.unlink(missing_ok=True)
        path.write_bytes(data)
        os.utime(path, ns=(mtime, mtime))

    def changed(self) -> list[Path]:
        return [p for p, (data, _) in self.originals.items() if p.read_bytes() != data]


def _raise_on_sigterm(signum: int, frame: object) -> None:
    raise SystemExit(128 + signum)


def run_tests(tests: tuple[str, ...], timeout: float) -> tuple[str, float]:
    """(status, seconds): "survived" if the tests pass, "killed" if not, or "timeout"."""
    env = dict(os.environ, PYTHONDONTWRITEBYTECODE="1")
    started = time.monotonic()
    with subprocess.Popen(
        (sys.executable, *PYTEST, *tests),
        cwd=ROOT,
        env=env,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
        start_new_session=True,
    ) as proc:
        try:
            rc = proc.wait(timeout=timeout)
        except BaseException as error:  # a timeout, or our own interruption
            os.killpg(proc.pid, signal.SIGKILL)
            proc.wait()
            if isinstance(error, subprocess.TimeoutExpired):
                return "timeout", time.monotonic() - started
            raise
    return ("survived" if rc == 0 else "killed"), time.monotonic() - started


def run_module(
    path: str, mutants: list[Mutant], restorer: Restorer, progress: bool
) -> list[Outcome]:
    tests = TARGETS[path]
    status, clean = run_tests(tests, timeout=600)
    if status != "survived":
        raise SystemExit(f"{path}: its tests {' '.join(tests)} do not pass unmutated")
    timeout = max(10.0, 5 * clean)
    file = ROOT / path
    source = restorer.originals[file][0]
    outcomes = []
    for number, mutant in enumerate(mutants, 1):
        try:
            restorer.write(file, mutant.apply(source))
            status, _ = run_tests(tests, timeout)
        finally:
            restorer.restore(file)
        outcomes.append(Outcome(mutant, status))
        if progress:
            print(f"  [{number}/{len(mutants)}] {status:8} {mutant.describe()}", file=sys.stderr)
    return outcomes


def dirty(paths: list[str]) -> list[str]:
    out = subprocess.run(
        ["git", "status", "--porcelain", "--", *paths],
        cwd=ROOT,
        capture_output=True,
        text=True,
        check=True,
    ).stdout
    return [line[3:] for line in out.splitlines()]


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
        lines = ["{:<28}{:>8}{:>8}{:>10}{:>11}{:>9}".format(*head)]
        lines += ["{:<28}{:>8}{:>8}{:>10}{:>11}{:>9}".format(*row) for row in rows]
        lines += ["", f"survivors ({len(survivors)}):"] + [f"  {s}" for s in survivors]
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument(
        "modules", nargs="*", help=f"entries of TARGETS (default all): {', '.join(TARGETS)}"
    )
    parser.add_argument("--max-per-module", type=int, help="sample at most N mutants per module")
    parser.add_argument("--seed", type=int, default=0, help="seed of that sample")
    parser.add_argument("--list", action="store_true", help="show the mutants, run nothing")
    parser.add_argument("--markdown", action="store_true", help="print the table for RESULTS.md")
    parser.add_argument("--quiet", action="store_true", help="no line per mutant on stderr")
    args = parser.parse_args(argv)
    unknown = [m for m in args.modules if m not in TARGETS]
    if unknown:
        parser.error(f"not in TARGETS: {', '.join(unknown)}")
    modules = args.modules or list(TARGETS)
    plan = {
        m: sample(generate(m, (ROOT / m).read_bytes()), args.max_per_module, args.seed)
        for m in modules
    }
    if args.list:
        for mutants in plan.values():
            print("\n".join(m.describe() for m in mutants))
        return 0
    if dirty(modules):
        raise SystemExit(f"uncommitted changes in {', '.join(dirty(modules))}: commit first")
    restorer = Restorer([ROOT / m for m in modules])
    previous = signal.signal(signal.SIGTERM, _raise_on_sigterm)
    try:
        results = {m: run_module(m, plan[m], restorer, not args.quiet) for m in modules}
    finally:
        for path in restorer.changed():
            restorer.restore(path)
        signal.signal(signal.SIGTERM, previous)
        if restorer.changed():
            raise SystemExit("could not restore: " + ", ".join(map(str, restorer.changed())))
    print(report(results, args.markdown))
    return 0


if __name__ == "__main__":
    sys.exit(main())
