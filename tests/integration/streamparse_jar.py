"""A stand-in for Leiningen for a streamparse project: what `lein clean`, `lein jar`,
`lein uberjar` and `lein deps :tree` do for the project `sparse quickstart` generates, so that
`sparse submit` and `sparse stats` run unchanged where Maven Central (and so Leiningen)
cannot be reached.

streamparse shells out to `lein`: `sparse submit` copies the project's src/ to
_resources/resources/ and runs `lein clean` and `lein jar` (`lein uberjar` with -u), taking
the jar from the "Created <path>" line; `sparse stats` reads the Storm version from
`lein deps :tree`. Put this script on PATH as `lein`:

    printf '#!/bin/sh\\nexec python3 %s "$@"\\n' "$PWD/streamparse_jar.py" > ~/bin/lein

What it packs is what Leiningen would: every file under the project's :source-paths (default
src) and :resource-paths, at their path relative to that directory, less :jar-exclusions (Java
regexes, matched anywhere in the entry's path), with a manifest. The one difference is that
an uberjar holds no JVM dependencies (they would come from Maven Central): squall runs no
Java components, and a streamparse project's jar needs only its Python files under resources/.
"""

from __future__ import annotations

import re
import shutil
import sys
import zipfile
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

MANIFEST = "Manifest-Version: 1.0\r\nCreated-By: squall streamparse_jar.py\r\n\r\n"


class ProjectError(ValueError):
    """project.clj is missing or does not say what a jar needs."""


@dataclass(frozen=True)
class Project:
    """What the jar needs from a project.clj."""

    name: str
    version: str
    source_paths: tuple[str, ...]
    resource_paths: tuple[str, ...]
    target_path: str
    exclusions: tuple[str, ...]
    dependencies: tuple[tuple[str, str], ...]


def _strings(text: str) -> tuple[str, ...]:
    return tuple(re.findall(r'"((?:[^"\\]|\\.)*)"', text))


def _vector(clj: str, key: str) -> str | None:
    """The text of the vector after `key` (brackets balanced), or None."""
    found = re.search(re.escape(key) + r"\s*\[", clj)
    if found is None:
        return None
    depth, start = 0, found.end() - 1
    for i in range(start, len(clj)):
        depth += {"[": 1, "]": -1}.get(clj[i], 0)
        if depth == 0:
            return clj[start + 1 : i]
    raise ProjectError(f"project.clj: the vector after {key} is not closed")


def parse_project(clj: str) -> Project:
    """The settings of a project.clj a `sparse quickstart` generates (Leiningen's defaults
    for those it leaves out)."""
    head = re.search(r'\(defproject\s+(\S+)\s+"([^"]+)"', clj)
    if head is None:
        raise ProjectError('project.clj has no (defproject name "version" ...)')
    target = re.search(r':target-path\s+"([^"]+)"', clj)
    exclusions = _vector(clj, ":jar-exclusions") or ""
    dependencies = _vector(clj, ":dependencies") or ""
    return Project(
        name=head.group(1).split("/")[-1],
        version=head.group(2),
        source_paths=_strings(_vector(clj, ":source-paths") or '"src"'),
        resource_paths=_strings(_vector(clj, ":resource-paths") or '"resources"'),
        target_path=target.group(1) if target else "target",
        exclusions=tuple(re.findall(r'#"((?:[^"\\]|\\.)*)"', exclusions)),
        dependencies=tuple(re.findall(r'\[([\w.\-]+/[\w.\-]+)\s+"([^"]+)"', dependencies)),
    )


def load_project(directory: Path) -> Project:
    path = directory / "project.clj"
    if not path.is_file():
        raise ProjectError(f"{directory} has no project.clj: run this in a streamparse project")
    return parse_project(path.read_text())


def jar_entries(directory: Path, project: Project) -> Iterator[tuple[str, Path]]:
    """(entry name, file) for every file the jar holds, in a stable order; a name met twice
    is packed once, from the first path that holds it (Leiningen's rule)."""
    seen: set[str] = set()
    for root in (*project.source_paths, *project.resource_paths):
        base = directory / root
        if not base.is_dir():
            continue
        for path in sorted(base.rglob("*")):
            name = path.relative_to(base).as_posix()
            if not path.is_file() or name in seen:
                continue
            if any(re.search(pattern, name) for pattern in project.exclusions):
                continue
            seen.add(name)
            yield name, path


def build_jar(directory: Path, standalone: bool = False) -> Path:
    """`lein jar` (`lein uberjar` when standalone) in `directory`: the jar's path."""
    project = load_project(directory)
    target = directory / project.target_path
    target.mkdir(parents=True, exist_ok=True)
    suffix = "-standalone" if standalone else ""
    jar = target / f"{project.name}-{project.version}{suffix}.jar"
    with zipfile.ZipFile(jar, "w", zipfile.ZIP_DEFLATED) as out:
        out.writestr("META-INF/MANIFEST.MF", MANIFEST)
        for name, path in jar_entries(directory, project):
            out.write(path, name)
    return jar


def lein(args: list[str], directory: Path) -> int:
    """The Leiningen tasks streamparse runs, printing what Leiningen prints that streamparse
    reads."""
    match args:
        case ["clean"]:
            shutil.rmtree(directory / load_project(directory).target_path, ignore_errors=True)
        case ["jar"]:
            print(f"Created {build_jar(directory)}")
        case ["uberjar"]:
            print(f"Created {build_jar(directory)}")
            print(f"Created {build_jar(directory, standalone=True)}")
        case ["deps", ":tree"]:
            for artifact, version in load_project(directory).dependencies:
                print(f' [{artifact} "{version}"]')
        case _:
            print(
                f"lein stand-in: {' '.join(args) or '(no task)'} is not supported", file=sys.stderr
            )
            return 2
    return 0


def main() -> int:
    try:
        return lein(sys.argv[1:], Path.cwd())
    except ProjectError as exc:
        print(f"lein stand-in: {exc}", file=sys.stderr)
        return 1


if __name__ == "__main__":
    sys.exit(main())
