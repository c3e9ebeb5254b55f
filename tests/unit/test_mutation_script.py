"""bench/mutation.py: the mutants it makes, what it leaves alone, and that it always restores."""

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


def test_the_original_is_restored_when_the_test_run_raises(tmp_path, monkeypatch):
    target = tmp_path / "target.py"
    target.write_bytes(SOURCE)
    mtime = target.stat().st_mtime_ns
    restorer = mutation.Restorer([target])
    monkeypatch.setattr(mutation, "ROOT", tmp_path)
    monkeypatch.setitem(mutation.TARGETS, "target.py", ("test_target.py",))
    seen = []

    def run_tests(tests, timeout):
        seen.append(target.read_bytes())
        if len(seen) == 1:
            return "survived", 0.1  # the clean run
        raise KeyboardInterrupt

    monkeypatch.setattr(mutation, "run_tests", run_tests)
    mutants = mutation.generate("target.py", SOURCE)
    with pytest.raises(KeyboardInterrupt):
        mutation.run_module("target.py", mutants, restorer, progress=False)
    assert seen[0] == SOURCE and seen[1] == mutants[0].apply(SOURCE)  # it did mutate
    assert target.read_bytes() == SOURCE
    assert target.stat().st_mtime_ns == mtime
    assert restorer.changed() == []


def test_a_mutant_gets_an_mtime_apart_from_the_original_and_no_stale_pyc(tmp_path):
    target = tmp_path / "target.py"
    target.write_bytes(SOURCE)
    cached = tmp_path / "__pycache__" / "target.cpython-311.pyc"
    cached.parent.mkdir()
    cached.write_bytes(b"stale")
    restorer = mutation.Restorer([target])
    restorer.write(target, SOURCE.replace(b"a < b", b"a > b"))
    assert not cached.exists()
    assert restorer.changed() == [target]
    assert target.stat().st_mtime_ns != restorer.originals[target][1]
    restorer.restore(target)
    assert restorer.changed() == []


def test_failing_tests_kill_and_passing_tests_let_survive(tmp_path, monkeypatch):
    (tmp_path / "test_pass.py").write_text("def test_ok():\n    assert True\n")
    (tmp_path / "test_fail.py").write_text("def test_no():\n    assert False\n")
    monkeypatch.setattr(mutation, "ROOT", tmp_path)
    assert mutation.run_tests(("test_pass.py",), timeout=60)[0] == "survived"
    assert mutation.run_tests(("test_fail.py",), timeout=60)[0] == "killed"


def test_a_hanging_test_run_times_out(tmp_path, monkeypatch):
    (tmp_path / "test_hang.py").write_text("import time\n\ndef test_hang():\n    time.sleep(60)\n")
    monkeypatch.setattr(mutation, "ROOT", tmp_path)
    assert mutation.run_tests(("test_hang.py",), timeout=3)[0] == "timeout"
