"""squall's build: pyproject.toml has the metadata; this adds the per-tuple path compiled by
mypyc (squall/hot_path.py's HOT_PATH) as C extensions beside their sources, as mypy and
black ship theirs. A wheel carries them; `pip install -e .` builds them in the checkout.

Without mypyc, without a C compiler, or with SQUALL_PURE=1 the build has no extensions and
squall runs its Python sources (a worker says so in its start line). The build records the
digests of the sources it compiled (squall/hot_path_build.json): a process whose sources
differ runs them, not the extensions (squall/hot_path.py).
"""

from __future__ import annotations

import importlib.util
import json
import os
import shutil
import sys
from pathlib import Path

from setuptools import setup
from setuptools.command.build_ext import build_ext
from setuptools.config.pyprojecttoml import load_file

ROOT = Path(__file__).resolve().parent
STAGE = ROOT / "build" / "mypyc-src"  # the package as a wheel lays it out (mypyc's module names)
TARGET = ROOT / "build" / "mypyc"  # mypyc's C
# setup.py's commands that compile (pip's editable install, wheel build, setup.py build_ext)
BUILDS = {"build", "build_ext", "bdist_wheel", "editable_wheel", "develop", "install"}


def _hot_path():
    spec = importlib.util.spec_from_file_location("_squall_hot_path", ROOT / "squall/hot_path.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module  # its dataclass looks itself up there
    spec.loader.exec_module(module)
    return module


hot_path = _hot_path()


def _pure_reason() -> str | None:
    if os.environ.get(hot_path.PURE_ENV, "") not in ("", "0"):
        return f"{hot_path.PURE_ENV}=1"
    if importlib.util.find_spec("mypyc") is None:
        return "mypyc is not installed"
    return None


def _module_file(module: str) -> str:
    return module.replace(".", "/") + ".py"


def _stage() -> None:
    """A copy of the package's Python files at STAGE/squall: the checkout keeps worker/,
    nimbus/ and supervisor/ outside squall/ (pyproject's package-dir), and mypyc names a
    module after its path. mypy's cache beside it stays for the next build."""
    package_dirs = load_file(ROOT / "pyproject.toml")["tool"]["setuptools"]["package-dir"]
    shutil.rmtree(STAGE / "squall", ignore_errors=True)
    ignore = shutil.ignore_patterns("__pycache__", "*.so", "*.pyd", "static", "*.yaml")
    for package, directory in sorted(package_dirs.items()):
        shutil.copytree(
            ROOT / directory, STAGE / package.replace(".", "/"), ignore=ignore, dirs_exist_ok=True
        )


def _extensions() -> list:
    if not BUILDS & set(sys.argv[1:]):
        return []  # metadata only: mypyc's minute is for the commands that build
    reason = _pure_reason()
    if reason is not None:
        print(f"squall: the per-tuple path stays interpreted ({reason})", file=sys.stderr)
        if {"editable_wheel", "develop"} & set(sys.argv[1:]):  # build_ext will not run:
            (ROOT / "squall" / hot_path.DIGESTS).unlink(missing_ok=True)  # old ones stop
        return []
    from mypyc.build import mypycify

    _stage()
    here = os.getcwd()
    os.chdir(STAGE)  # mypy finds squall here, not the checkout's squall/ without worker/
    try:
        return mypycify(
            ["--ignore-missing-imports", "--disable-error-code", "annotation-unchecked"]
            + [_module_file(module) for module in hot_path.HOT_PATH],
            group_name=hot_path.GROUP,
            target_dir=str(TARGET),
        )
    finally:
        os.chdir(here)


class OptionalBuildExt(build_ext):
    """build_ext that records what it compiled, and leaves the install interpreted where
    the extensions cannot be built (no C compiler or Python headers)."""

    def run(self) -> None:
        built = bool(self.extensions)
        if built:
            try:
                super().run()
            except Exception as exc:  # distutils' compile and link errors have no common base
                if not _compile_error(exc):
                    raise
                print(f"squall: the per-tuple path stays interpreted ({exc})", file=sys.stderr)
                built = False
        for directory in self._outputs_dirs():
            self._record(directory, built)

    def _outputs_dirs(self) -> list[Path]:
        dirs = [Path(self.build_lib) / "squall"]
        if self.inplace or self.editable_mode:
            dirs.append(Path(self.get_finalized_command("build_py").get_package_dir("squall")))
        return dirs

    def _record(self, squall_dir: Path, built: bool) -> None:
        record = squall_dir / hot_path.DIGESTS
        if not built:
            record.unlink(missing_ok=True)  # an older build's extensions no longer run
            return
        squall_dir.mkdir(parents=True, exist_ok=True)
        digests = {m: hot_path.digest(STAGE / _module_file(m)) for m in hot_path.HOT_PATH}
        record.write_text(json.dumps(digests, indent=1, sort_keys=True) + "\n")

    def get_outputs(self) -> list[str]:
        record = str(Path(self.build_lib) / "squall" / hot_path.DIGESTS)
        return [*super().get_outputs(), record] if self.extensions else super().get_outputs()


def _compile_error(exc: Exception) -> bool:
    names = {cls.__name__ for cls in type(exc).__mro__}
    return bool(
        names
        & {
            "CCompilerError",
            "CompileError",
            "LinkError",
            "DistutilsExecError",
            "DistutilsPlatformError",
        }
    )


setup(ext_modules=_extensions(), cmdclass={"build_ext": OptionalBuildExt})
