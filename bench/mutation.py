"""A small mutation run over decision modules: each mutant changes one line (a comparison,
an operator, a boolean, a constant, or the line removed); a mutant is killed when the given
tests fail on it. Prints every surviving mutant and the score.

    python bench/mutation.py worker/acker.py ... -- tests/unit/test_acker.py ...

The module is rewritten in place and always restored (the package is installed editable).
"""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

SWAPS = [
    ("<=", "<"),
    (">=", ">"),
    (" < ", " <= "),
    (" > ", " >= "),
    ("==", "!="),
    ("!=", "=="),
    ("^=", "|="),
    (" ^ ", " | "),
    (" and ", " or "),
    (" or ", " and "),
    ("not ", ""),
    (" + ", " - "),
    (" - ", " + "),
    ("% 2", "% 3"),
    ("True", "False"),
    ("False", "True"),
    (" is None", " is not None"),
    (" is not None", " is None"),
    ("[0]", "[1]"),
    ("[1]", "[0]"),
]
SKIP = re.compile(r"^\s*(#|@|def |class |import |from |\"\"\"|raise |case _|\)|\]|$)")


def mutants(lines: list[str]):
    in_docstring = False
    for n, line in enumerate(lines):
        if line.count('"""') == 1:
            in_docstring = not in_docstring
            continue
        if in_docstring or SKIP.match(line) or not line.startswith(" "):
            continue  # module-level lines are imports, type aliases and constants
        code = line.split("  #")[0]
        for old, new in SWAPS:
            start = 0
            while (i := code.find(old, start)) >= 0:
                yield n, line[:i] + new + line[i + len(old) :]
                start = i + len(old)
        stripped = line.strip()
        keyword = stripped.startswith(("return", "else", "elif", "try", "except", "case", "match"))
        if not keyword and not stripped.endswith((":", "(", "[", "{", ",")):
            indent = line[: len(line) - len(line.lstrip())]
            yield n, indent + "pass\n"


def _tests_pass(tests: list[str]) -> bool:
    """Whether the tests pass; a mutant that hangs them (an endless loop) is caught."""
    command = [sys.executable, "-m", "pytest", "-x", "-q", "-p", "no:cacheprovider", *tests]
    try:
        return subprocess.run(command, capture_output=True, timeout=30).returncode == 0
    except subprocess.TimeoutExpired:
        return False


def main(argv: list[str]) -> int:
    split = argv.index("--")
    modules, tests = argv[:split], argv[split + 1 :]
    killed = total = 0
    for module in modules:
        path = Path(module)
        original = path.read_text()
        lines = original.splitlines(keepends=True)
        try:
            for n, mutated in mutants(lines):
                path.write_text("".join(lines[:n] + [mutated] + lines[n + 1 :]))
                total += 1
                if _tests_pass(tests):
                    print(f"SURVIVED {module}:{n + 1}: {mutated.strip()}", flush=True)
                else:
                    killed += 1
        finally:
            path.write_text(original)
    print(f"{killed}/{total} mutants killed ({100 * killed / max(total, 1):.0f}%)")
    return 0 if killed == total else 1


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
