"""squall laid out as a wheel installs it, staged from wherever this process imports it:
in a checkout, worker/, nimbus/ and supervisor/ become squall.worker, squall.nimbus and
squall.supervisor only through pyproject's package-dir and the editable install's import hook,
which mypy does not follow (squall/type_check.py)."""

from __future__ import annotations

import importlib.util
import shutil
from pathlib import Path

# Packages that pyproject's package-dir maps from outside squall/ in a checkout.
SUBPACKAGES = ("nimbus", "supervisor", "worker")


class PackageLayoutError(RuntimeError):
    """squall's packages are not importable where this process looks."""


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


def stage_package(work: Path, sources: list[tuple[Path, Path]]) -> None:
    """A copy of the squall package at work/squall: symlinks resolved, the subpackages
    where a wheel puts them."""
    ignore = shutil.ignore_patterns("__pycache__", "*.so")
    for source, relative in sources:
        shutil.copytree(source, work / "squall" / relative, ignore=ignore, dirs_exist_ok=True)


def _package_dir(package: str) -> Path:
    spec = importlib.util.find_spec(package)
    if spec is None or not spec.submodule_search_locations:
        raise PackageLayoutError(f"{package} is not an importable package")
    return Path(next(iter(spec.submodule_search_locations))).resolve()
