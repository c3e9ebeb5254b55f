"""mypy over squall laid out as a wheel installs it; `make test` runs
`python -m squall.type_check`.

In a checkout, worker/, nimbus/ and supervisor/ become squall.worker, squall.nimbus and
squall.supervisor only through setuptools' package-dir and the editable install's import
hook, which mypy does not follow: run over the checkout's directories, it typed every
`squall.worker` import as missing (Any) and checked worker/ as a package named `worker`.
So the package is staged as a wheel lays it out (squall/package_layout.py), and
mypy checks `-p squall` there, for the oldest Python squall supports. Its findings name the
checkout's files.
"""

from __future__ import annotations

import subprocess
import sys
import tempfile
from pathlib import Path

from squall.package_layout import package_sources, stage_package

OLDEST_PYTHON = "3.10"  # pyproject.toml's requires-python


def type_check() -> int:
    """mypy's exit status; its report on stdout, with the checkout's paths."""
    sources = package_sources()
    with tempfile.TemporaryDirectory(prefix="squall-type-check-") as work:
        stage_package(Path(work), sources)
        run = subprocess.run(
            [sys.executable, "-m", "mypy", "--python-version", OLDEST_PYTHON]
            + ["--ignore-missing-imports", "--no-incremental", "-p", "squall"]
            + ["--disable-error-code", "annotation-unchecked"],
            cwd=work,
            capture_output=True,
            text=True,
        )
    report = run.stdout + run.stderr
    for source, relative in sorted(sources, key=lambda s: -len(s[1].parts)):
        staged = (Path("squall") / relative).as_posix().rstrip("/.") + "/"
        report = report.replace(staged, f"{_shown(source)}/")
    print(report, end="")
    return run.returncode


def _shown(directory: Path) -> str:
    """`directory` relative to where the command runs when it is below it (a checkout)."""
    try:
        return directory.relative_to(Path.cwd()).as_posix()
    except ValueError:
        return directory.as_posix()


if __name__ == "__main__":
    sys.exit(type_check())
