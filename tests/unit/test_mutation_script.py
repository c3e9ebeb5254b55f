"""bench/mutation.py: the mutants it makes, what it leaves alone, and that each runs in place of
its module without any file changing."""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path

import pytest

_PATH = Path(__file__).resolve().parents[2] / "bench" / "mutation.py"
_spec = importlib.util.spec_from_file_location("bench_mutation", _PATH)
mutation = importlib.util.module_from_spec(_spec)
sys.modules["bench_mutation"] = mutation  # dataclasses look their module up by name
_spec.loader.exec_module(mutation)

SOURCE = b'''\
"""Module docstring."""
__all__ = ["f"]
Alias = int | None
log = None


def f(a: int, b: int = 2) -> int | None:
    """Docstring."""
    log.info("x %s", a + 1)
    if a < b and not a:
        raise ValueError(f"bad {a + 1}")
    for i in range(a):
        a += i
        break
    return a - 1
'''


def changes(source: bytes) -> set[tuple[int, str, str]]:
    return {(m.line, m.old, m.new) for m in mutation.generate("m.py", source)}


def test_the_mutants_of_a_small_source():
    assert changes(SOURCE) == {
        (7, "2", "3"),
        (10, 'if a < b and not a:\n        raise ValueError(f"bad {a + 1}")', "pass"),
        (10, "a < b and not a", "True"),
        (10, "a < b and not a", "False"),
        (10, "a < b and not a", "(a < b or not a)"),
        (10, "a < b", "(a <= b)"),
        (10, "a < b", "(a >= b)"),
        (10, "not a", "(a)"),
        (11, 'raise ValueError(f"bad {a + 1}")', "pass"),
        (12, "for i in range(a):\n        a += i\n        break", "pass"),
        (13, "a += i", "a -= i"),
        (13, "a += i", "pass"),
        (14, "break", "continue"),
        (14, "break", "pass"),
        (15, "a - 1", "None"),
        (15, "a - 1", "(a + 1)"),
        (15, "1", "0"),
    }


def test_docstrings_logging_annotations_raise_messages_and_all_are_not_mutated():
    lines = {line for line, _, _ in changes(SOURCE)}
    assert not lines & {1, 2, 3, 8, 9}  # docstrings, __all__, a type alias, a logging call
    raise_line = {(old, new) for line, old, new in changes(SOURCE) if line == 11}
    assert raise_line == {('raise ValueError(f"bad {a + 1}")', "pass")}


def test_constants():
    assert changes(b"x = 0\ny = 1\nz = 7\nt = True\n") == {
        (1, "0", "1"),
        (2, "1", "0"),
        (3, "7", "8"),
        (4, "True", "False"),
    }


def test_return_none_and_mutants_that_do_not_compile_are_skipped():
    assert changes(b"def f():\n    return None\n") == set()
    # `x < y < z` -> `x <= y < z` and `x < y <= z` both kept; nothing that fails to compile
    assert len(changes(b"ok = 1 < 2 < 3\n")) == 4 + 3  # four comparison swaps, three ints


def test_every_mutant_compiles_and_differs(tmp_path):
    source = _PATH.read_bytes()
    for mutant in mutation.generate("bench/mutation.py", source):
        mutated = mutant.apply(source)
        assert mutated != source
        compile(mutated, "m.py", "exec")


def test_sample_is_seeded_and_in_file_order():
    mutants = mutation.generate("m.py", SOURCE)
    first = mutation.sample(mutants, 5, seed=3)
    assert first == mutation.sample(mutants, 5, seed=3)
    assert len(first) == 5
    assert first == sorted(first, key=lambda m: (m.start, m.end, m.new))
    assert mutation.sample(mutants, None, seed=3) == mutants


def test_module_names_follow_the_package_dirs():
    assert mutation.module_name("nimbus/core/decide.py") == "squall.nimbus.core.decide"
    assert mutation.module_name("supervisor/sync.py") == "squall.supervisor.sync"
    assert mutation.module_name("worker/acking.py") == "squall.worker.acking"
    assert mutation.module_name("squall/liveness.py") == "squall.liveness"
    assert mutation.module_name("squall/recipes/ownership.py") == "squall.recipes.ownership"
    assert mutation.module_name("nimbus/__init__.py") == "squall.nimbus"
    with pytest.raises(ValueError):
        mutation.module_name("bench/mutation.py")


def test_package_dirs_are_pyprojects():
    tomllib = pytest.importorskip("tomllib")
    pyproject = tomllib.loads((mutation.ROOT / "pyproject.toml").read_text())
    package_dir = pyproject["tool"]["setuptools"]["package-dir"]
    assert {folder: name for name, folder in package_dir.items()} == mutation.PACKAGE_DIRS


def test_every_target_is_the_module_python_imports_under_that_name():
    assert "nimbus/core/decide.py" in mutation.TARGETS
    for path in mutation.TARGETS:
        spec = importlib.util.find_spec(mutation.module_name(path))
        origin, source = Path(spec.origin).resolve(), (mutation.ROOT / path).resolve()
        # in a compiled venv, a hot-path module is its mypyc extension (the tool's mutants
        # run with SQUALL_PURE=1): the same module, name.cpython-...so
        assert origin == source or (
            origin.name.split(".")[0] == source.stem and origin.parent.name == source.parent.name
        )


def test_every_import_form_names_the_module():
    source = b"""\
import squall.nimbus.core.decide
import squall.worker.acker as acker
from squall.nimbus.core import states, model as m
from squall.supervisor.slot import Slot, step
from . import helpers
from .helpers import thing
"""
    assert mutation.imported_names(source) == {
        "squall.nimbus.core.decide",
        "squall.worker.acker",
        "squall.nimbus.core",
        "squall.nimbus.core.states",
        "squall.nimbus.core.model",
        "squall.supervisor.slot",
        "squall.supervisor.slot.Slot",
        "squall.supervisor.slot.step",
    }


def test_relative_imports_count_where_the_importing_package_is_known():
    source = b"from . import acking\nfrom .acker import Acker\nfrom ..structure import ACKER\n"
    assert mutation.imported_names(source) == set()  # a test file's: no package
    assert mutation.imported_names(source, "squall.worker") == {
        "squall.worker",
        "squall.worker.acking",
        "squall.worker.acker",
        "squall.worker.acker.Acker",
        "squall.structure",
        "squall.structure.ACKER",
    }


def test_imports_inside_functions_count():
    source = b"def test_x():\n    from squall.worker import lifecycle\n"
    assert "squall.worker.lifecycle" in mutation.imported_names(source)


@pytest.fixture
def tree(tmp_path, monkeypatch):
    """A repository root with pkg/ (as package pkg) and three unit-test files."""
    (tmp_path / "pkg").mkdir()
    for name in ("a", "b", "c", "untested"):
        (tmp_path / "pkg" / f"{name}.py").write_text("x = 1\n")
    unit = tmp_path / "tests" / "unit"
    unit.mkdir(parents=True)
    (unit / "test_one.py").write_text("from pkg import a\nimport pkg.b\n")
    (unit / "test_two.py").write_text("from pkg.a import x\n")
    (unit / "test_three.py").write_text("def test():\n    from pkg.c import x as y\n")
    (unit / "helper_a.py").write_text("from pkg import untested\n")  # not a test file
    (unit / "test_near.py").write_text("import pkg.aa\nfrom pkg import bb\n")
    monkeypatch.setattr(mutation, "ROOT", tmp_path)
    monkeypatch.setitem(mutation.PACKAGE_DIRS, "pkg", "pkg")
    return tmp_path


def test_the_tests_of_a_module_are_the_test_files_importing_it(tree):
    assert mutation.tests_of(["pkg/a.py", "pkg/b.py", "pkg/c.py"]) == {
        "pkg/a.py": ("tests/unit/test_one.py", "tests/unit/test_two.py"),
        "pkg/b.py": ("tests/unit/test_one.py",),
        "pkg/c.py": ("tests/unit/test_three.py",),
    }


def test_via_importers_the_tests_of_a_module_importing_the_target_count_too(tree):
    (tree / "pkg" / "d.py").write_text("from .c import x\n")  # d imports c
    (tree / "tests" / "unit" / "test_four.py").write_text("import pkg.d\n")
    assert mutation.importers("pkg.c", mutation.package_imports()) == {"pkg.d"}
    assert mutation.tests_of(["pkg/c.py"]) == {"pkg/c.py": ("tests/unit/test_three.py",)}
    assert mutation.tests_of(["pkg/c.py"], via_importers=True) == {
        "pkg/c.py": ("tests/unit/test_four.py", "tests/unit/test_three.py")
    }


def test_a_target_no_test_imports_or_with_no_file_is_an_error_naming_it(tree):
    with pytest.raises(mutation.UntestedTarget) as error:
        mutation.tests_of(["pkg/a.py", "pkg/untested.py", "pkg/gone.py"])
    assert str(error.value) == (
        "pkg/untested.py: no file tests/unit/test_*.py imports pkg.untested; "
        "pkg/gone.py: no such file"
    )


def test_every_target_here_has_unit_tests_that_import_it():
    tests = mutation.tests_of(mutation.TARGETS)
    assert set(tests) == set(mutation.TARGETS)
    assert "tests/unit/test_slot.py" in tests["supervisor/slot.py"]
    assert "tests/unit/test_worker_lifecycle.py" in tests["worker/lifecycle.py"]


def test_main_refuses_a_target_no_test_imports(tree, monkeypatch, capsys):
    monkeypatch.setattr(mutation, "TARGETS", ("pkg/a.py", "pkg/untested.py"))
    with pytest.raises(SystemExit) as exit:
        mutation.main(["pkg/untested.py", "--list"])
    assert exit.value.code == 2
    assert "pkg/untested.py: no file tests/unit/test_*.py imports pkg.untested" in (
        capsys.readouterr().err
    )
    assert mutation.main(["pkg/a.py", "--list"]) == 0
    assert capsys.readouterr().out == "pkg/a.py:1: `1` -> `0`\n"


@pytest.fixture
def package(tmp_path, monkeypatch):
    """tmp_path/pkg/target.py, a module `pkg.target`, and tests of it, as the script's ROOT."""
    (tmp_path / "pkg").mkdir()
    (tmp_path / "pkg" / "__init__.py").write_text("")
    (tmp_path / "pkg" / "target.py").write_text(
        "def f():\n    return 1\n\n\ndef untested():\n    return 5\n"
    )
    (tmp_path / "test_target.py").write_text(
        "from pkg.target import f\n\ndef test_f():\n    assert f() == 1\n"
    )
    (tmp_path / "test_other.py").write_text("def test_ok():\n    assert True\n")
    (tmp_path / "test_hang.py").write_text(
        "import time\nfrom pkg.target import f\n\ndef test_hang():\n    time.sleep(60)\n"
    )
    monkeypatch.setattr(mutation, "ROOT", tmp_path)
    monkeypatch.setitem(mutation.PACKAGE_DIRS, "pkg", "pkg")
    return tmp_path / "pkg" / "target.py"


def test_the_mutant_is_loaded_in_place_of_the_module_and_no_file_changes(package):
    before = (package.read_bytes(), package.stat().st_mtime_ns)
    original = package.read_bytes()
    run = mutation.run_tests
    assert run("pkg/target.py", original, ("test_target.py",), 60)[0] == "survived"
    mutated = original.replace(b"return 1", b"return 2")
    assert run("pkg/target.py", mutated, ("test_target.py",), 60)[0] == "killed"
    assert (package.read_bytes(), package.stat().st_mtime_ns) == before
    assert not (package.parent / "__pycache__").exists()


def test_tests_that_never_import_the_target_are_reported(package):
    status, _ = mutation.run_tests("pkg/target.py", b"", ("test_other.py",), 60)
    assert status == "not imported"


def test_a_hanging_test_run_times_out(package):
    source = package.read_bytes()
    assert mutation.run_tests("pkg/target.py", source, ("test_hang.py",), 3)[0] == "timeout"


def test_run_all_scores_each_mutant_of_each_module(package):
    mutants = mutation.generate("pkg/target.py", package.read_bytes())
    assert [(m.line, m.new) for m in mutants] == [(2, "0"), (2, "None"), (6, "6"), (6, "None")]
    plan = {"pkg/target.py": mutants}
    results = mutation.run_all(plan, {"pkg/target.py": ("test_target.py",)}, 2, False)
    statuses = [o.status for o in results["pkg/target.py"]]
    assert statuses == ["killed", "killed", "survived", "survived"]
    table = mutation.report(results, markdown=True)
    assert "| pkg/target.py | 4 | 2 | 2 | 0 | 50.0 |" in table
    assert "- pkg/target.py:6: `5` -> `6`" in table


def test_a_per_tuple_module_is_mutated_too_though_squall_loads_those_its_own_way():
    """`import squall` puts a finder of its own first on the meta path for the per-tuple
    modules (squall/hot_path.py); the mutant's loader must still come before it, or a
    mutant of worker/anchoring.py is never loaded and its run says "not imported"."""
    path, tests = "worker/anchoring.py", ("tests/unit/test_anchoring.py",)
    source = (mutation.ROOT / path).read_bytes()
    assert mutation.run_tests(path, source, tests, 120)[0] == "survived"
    mutated = source.replace(b"self.emitted = 0", b"self.emitted = 1")
    assert mutated != source
    assert mutation.run_tests(path, mutated, tests, 120)[0] == "killed"
