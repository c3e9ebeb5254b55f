"""A small mutation run: change one thing in one line of a decision module, run its unit
tests, and count the changes no test noticed.

    .venv/bin/python bench/mutation_hook.py squall.nimbus.decide nimbus/decide.py \
        -- tests/unit/test_nimbus_decide.py tests/unit/test_nimbus_properties.py

Each mutant runs in a fresh process that loads the mutated source in place of the module
(an import hook), so the files on disk never change and other processes using the tree are
not disturbed. Mutations: comparison operators flipped or loosened (< <=, == !=, in/not in,
is/is not), and/or swapped, `not` dropped, numbers +1, booleans flipped, + and - swapped,
and each statement replaced by `pass`. Not mutated: docstrings, decorator arguments
(`frozen=True`) and module-level type aliases (`Slot = tuple[str, int]`), whose changes no
behaviour test can see.
"""

from __future__ import annotations

import argparse
import ast
import copy
import importlib.abc
import importlib.util
import subprocess
import sys
from pathlib import Path

COMPARE_SWAPS = {
    ast.Lt: ast.LtE,
    ast.LtE: ast.Lt,
    ast.Gt: ast.GtE,
    ast.GtE: ast.Gt,
    ast.Eq: ast.NotEq,
    ast.NotEq: ast.Eq,
    ast.In: ast.NotIn,
    ast.NotIn: ast.In,
    ast.Is: ast.IsNot,
    ast.IsNot: ast.Is,
}
BINOP_SWAPS = {ast.Add: ast.Sub, ast.Sub: ast.Add}
STATEMENTS = (ast.Assign, ast.AugAssign, ast.AnnAssign, ast.Expr, ast.Return, ast.If, ast.Raise)


def _is_docstring(node: ast.AST) -> bool:
    return isinstance(node, ast.Expr) and isinstance(node.value, ast.Constant)


def _is_type_alias(node: ast.AST) -> bool:
    value = getattr(node, "value", None)
    is_union = isinstance(value, ast.BinOp) and isinstance(value.op, ast.BitOr)
    return isinstance(node, ast.Assign) and (isinstance(value, ast.Subscript) or is_union)


def _skipped(tree: ast.Module) -> set[int]:
    """ids of the nodes no mutation touches."""
    roots = [n for n in tree.body if _is_type_alias(n)]
    for node in ast.walk(tree):
        roots += getattr(node, "decorator_list", [])
    return {id(n) for root in roots for n in ast.walk(root)}


def sites(tree: ast.Module) -> list[tuple[int, int, str]]:
    """(node index in ast.walk order, variant, description) for every mutation."""
    out = []
    skipped = _skipped(tree)
    for i, node in enumerate(ast.walk(tree)):
        line = getattr(node, "lineno", 0)
        if id(node) in skipped:
            continue
        if isinstance(node, ast.Compare):
            out += [(i, k, f"{line}: flip comparison {k}") for k in range(len(node.ops))]
        elif isinstance(node, ast.BoolOp):
            out.append((i, 0, f"{line}: and/or swapped"))
        elif isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.Not):
            out.append((i, 0, f"{line}: not dropped"))
        elif isinstance(node, ast.BinOp) and type(node.op) in BINOP_SWAPS:
            out.append((i, 0, f"{line}: +/- swapped"))
        elif isinstance(node, ast.Constant) and type(node.value) in (int, float, bool):
            out.append((i, 0, f"{line}: constant {node.value!r} changed"))
        elif isinstance(node, STATEMENTS) and not _is_docstring(node) and line:
            out.append((i, 1, f"{line}: statement removed"))
    return out


def mutate(tree: ast.AST, index: int, variant: int) -> ast.AST:
    tree = copy.deepcopy(tree)
    parents = {c: p for p in ast.walk(tree) for c in ast.iter_child_nodes(p)}
    node = list(ast.walk(tree))[index]
    if isinstance(node, ast.Compare):
        node.ops[variant] = COMPARE_SWAPS.get(type(node.ops[variant]), ast.Eq)()
    elif isinstance(node, ast.BoolOp):
        node.op = ast.Or() if isinstance(node.op, ast.And) else ast.And()
    elif isinstance(node, ast.UnaryOp):
        _replace(parents[node], node, node.operand)
    elif isinstance(node, ast.BinOp):
        node.op = BINOP_SWAPS[type(node.op)]()
    elif isinstance(node, ast.Constant):
        node.value = (not node.value) if isinstance(node.value, bool) else node.value + 1
    else:
        _replace(parents[node], node, ast.Pass())
    return ast.fix_missing_locations(tree)


def _replace(parent: ast.AST, old: ast.AST, new: ast.AST) -> None:
    for name, value in ast.iter_fields(parent):
        if value is old:
            setattr(parent, name, new)
        elif isinstance(value, list) and old in value:
            value[value.index(old)] = new


class _MutantFinder(importlib.abc.MetaPathFinder, importlib.abc.Loader):
    def __init__(self, module: str, path: Path, source: str) -> None:
        self.module, self.path, self.source = module, path, source

    def find_spec(self, fullname, target_path=None, target=None):
        if fullname != self.module:
            return None
        return importlib.util.spec_from_loader(fullname, self, origin=str(self.path))

    def create_module(self, spec):
        return None

    def exec_module(self, module):
        module.__file__ = str(self.path)
        exec(compile(self.source, str(self.path), "exec"), module.__dict__)


def run_one(module: str, path: Path, index: int, variant: int, tests: list[str]) -> int:
    """In this process: load the mutant, run the tests, return pytest's exit code."""
    import pytest

    tree = ast.parse(path.read_text())
    source = ast.unparse(mutate(tree, index, variant))
    sys.meta_path.insert(0, _MutantFinder(module, path, source))
    return pytest.main(
        ["-x", "-q", "-p", "no:cacheprovider", "--no-header", "-o", "addopts=", *tests]
    )


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("module")
    parser.add_argument("path", type=Path)
    parser.add_argument("tests", nargs="+")
    parser.add_argument("--one", nargs=2, type=int)
    args = parser.parse_args()
    if args.one:
        raise SystemExit(run_one(args.module, args.path, *args.one, args.tests))
    survivors, mutants = [], sites(ast.parse(args.path.read_text()))
    for index, variant, what in mutants:
        one = ["--one", str(index), str(variant)]
        command = [sys.executable, __file__, args.module, str(args.path), *args.tests, *one]
        result = subprocess.run(command, capture_output=True, timeout=600)
        if result.returncode == 0:
            survivors.append(what)
            print(f"SURVIVED {args.path}:{what}", flush=True)
    killed = len(mutants) - len(survivors)
    print(f"{args.path}: {killed}/{len(mutants)} mutants killed")


if __name__ == "__main__":
    main()
