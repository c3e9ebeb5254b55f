"""Topology code packages: how a client packs a topology's directory, how nimbus checks an
upload at submit and how a supervisor unpacks it, safely.

A package is a gzip'd tar of the directory holding the topology file, or a Storm jar (a zip;
shell components' scripts under its `resources/`, as Storm packs them). Unpacking refuses
absolute paths, '..', links and special files, and bounds the entries and the bytes written,
so a hostile package cannot write outside its directory, fill the disk or keep a supervisor
busy for minutes. Refusals name the package as what was sent (jar or tgz), never as the
file nimbus stores it in.
"""

from __future__ import annotations

import functools
import io
import posixpath
import shutil
import stat
import tarfile
import zipfile
import zlib
from collections.abc import Callable, Iterator
from pathlib import Path, PurePosixPath
from typing import IO

CODE_FILE = "code.tgz"
STRUCTURE_FILE = "stormcode.json"
CONF_FILE = "stormconf.json"
STORED_FILES = (CODE_FILE, STRUCTURE_FILE, CONF_FILE)

# Defaults of supervisor.code.max.bytes and supervisor.code.max.entries (conf/defaults.yaml)
MAX_UNPACKED_BYTES = 1 << 30
MAX_ENTRIES = 10_000
_CHUNK = 1 << 16
_ZIP_MAGIC = b"PK\x03\x04"
_GZIP_MAGIC = b"\x1f\x8b"
_SKIP_DIRS = {"__pycache__", ".git", ".venv", ".squall", "node_modules"}


class PackageError(ValueError):
    """A code package is malformed or tries to escape its directory."""


def package_files(directory: Path) -> list[tuple[str, int]]:
    """(path relative to `directory`, bytes) of each file pack_directory packs, in its
    order: plain files only, skipping caches, VCS and hidden entries (`submit --dry-run`
    lists them)."""
    out = []
    for path in sorted(directory.rglob("*")):
        rel = path.relative_to(directory)
        if any(part in _SKIP_DIRS or part.startswith(".") for part in rel.parts):
            continue
        if path.is_file() and not path.is_symlink():
            out.append((str(rel), path.stat().st_size))
    return out


def pack_directory(directory: Path, max_bytes: int) -> bytes:
    """The directory's Python sources and data, skipping caches, VCS and hidden entries."""
    buf = io.BytesIO()
    with tarfile.open(fileobj=buf, mode="w:gz") as tar:
        for rel, _ in package_files(directory):
            tar.add(directory / rel, arcname=rel, recursive=False)
            if buf.tell() > max_bytes:
                raise PackageError(
                    f"{directory} packs to more than {max_bytes} bytes; "
                    "keep large data out of the topology's directory"
                )
    return buf.getvalue()


def unpack(
    package: Path,
    target: Path,
    max_bytes: int = MAX_UNPACKED_BYTES,
    max_entries: int = MAX_ENTRIES,
) -> None:
    """Unpack `package` into `target`, entry by entry as the package is read, counting
    entries and the bytes actually written (a header's size is never trusted alone: a
    4 MB package once unpacked to 904 MB, and one of 200,000 entries took 72 s). On any
    refusal `target` is removed, so a half-unpacked package is never mistaken for code."""
    target.mkdir(parents=True, exist_ok=True)
    try:
        _walk(package, target.resolve(), max_bytes, max_entries)
    except PackageError:
        shutil.rmtree(target, ignore_errors=True)
        raise


def check(
    package: Path,
    max_bytes: int = MAX_UNPACKED_BYTES,
    max_entries: int = MAX_ENTRIES,
) -> None:
    """Raise PackageError, naming what is wrong, unless `package` would unpack within the
    limits; nothing is written. Nimbus checks an upload with this at submit, so a package
    that no supervisor could use is refused to its submitter, not retried on every
    supervisor as a topology error."""
    _walk(package, None, max_bytes, max_entries)


def kind(package: Path) -> str | None:
    """What was sent: "jar" (a zip: a Storm jar, scripts under resources/), "tgz" (squall's
    gzip'd tar), or None for neither."""
    with package.open("rb") as f:
        head = f.read(4)
    if head == _ZIP_MAGIC:
        return "jar"
    return "tgz" if head[:2] == _GZIP_MAGIC else None


def is_zip(package: Path) -> bool:
    """A Storm jar (a zip, its scripts under resources/) rather than squall's gzip'd tar."""
    return kind(package) == "jar"


# An entry as the walk sees it: its name, whether it is a directory, and how to read it.
_Entry = tuple[str, bool, Callable[[], IO[bytes] | None]]


def _walk(package: Path, root: Path | None, max_bytes: int, max_entries: int) -> None:
    """Every entry of the package checked, and written under `root` unless it is None."""
    try:
        what = kind(package)
        with package.open("rb") as f:
            head = f.read(8)
    except OSError as exc:
        raise PackageError(f"cannot read the package: {exc}") from exc
    if what is None:
        raise PackageError(
            f"the package is neither a jar (a zip) nor a tgz (a gzip'd tar): it begins {head!r}"
        )
    entries = written = 0
    try:
        for name, is_dir, source in (
            _zip_entries(package) if what == "jar" else _tar_entries(package)
        ):
            entries += 1
            if entries > max_entries:
                raise PackageError(f"the {what} has more than {max_entries} entries")
            relative = _relative(name, is_dir, what)
            dest = None if root is None else _destination(root, relative, name, what)
            if is_dir:
                if dest is not None:
                    dest.mkdir(parents=True, exist_ok=True)
                continue
            data = source()
            assert data is not None  # a regular file: its reader refused anything else
            with data:
                written += _copy_bounded(data, dest, max_bytes - written, max_bytes, what)
    except PackageError:
        raise
    except (
        tarfile.TarError,
        zipfile.BadZipFile,
        EOFError,
        OSError,
        zlib.error,
        RuntimeError,
    ) as exc:
        raise PackageError(f"cannot unpack the {what}: {exc}") from exc


def _zip_entries(package: Path) -> Iterator[_Entry]:
    with zipfile.ZipFile(package) as jar:
        for info in jar.infolist():
            mode = (info.external_attr >> 16) & 0o170000
            if mode and mode not in (stat.S_IFREG, stat.S_IFDIR):
                raise PackageError(f"jar entry {info.filename!r} is not a plain file")
            yield info.filename, info.is_dir(), functools.partial(jar.open, info)


def _tar_entries(package: Path) -> Iterator[_Entry]:
    """Read as a stream: each entry is yielded (and read) before the next is parsed."""
    with tarfile.open(package, mode="r|gz") as tar:
        for m in tar:
            if not (m.isfile() or m.isdir()):
                raise PackageError(f"tgz entry {m.name!r} is not a plain file")
            yield m.name, m.isdir(), functools.partial(tar.extractfile, m)


def _relative(name: str, is_dir: bool, what: str) -> PurePosixPath:
    """The entry's path inside the package's directory; one that would leave it (absolute,
    or up through '..') is refused, and only a directory may name the directory itself."""
    normal = posixpath.normpath(name)
    leaves = normal == ".." or normal.startswith("../") or normal == "." and not is_dir
    if name.startswith("/") or leaves:
        raise PackageError(f"{what} entry {name!r} escapes its directory")
    return PurePosixPath(normal)


def _destination(root: Path, relative: PurePosixPath, name: str, what: str) -> Path:
    """Where the entry is written: checked again on disk, where a path could resolve
    elsewhere (entries are never links, so this holds for a fresh directory)."""
    dest = (root / relative).resolve()
    if not dest.is_relative_to(root):
        raise PackageError(f"{what} entry {name!r} escapes its directory")
    return dest


def _copy_bounded(
    source: IO[bytes], dest: Path | None, allowed: int, max_bytes: int, what: str
) -> int:
    """Copy at most `allowed` bytes to `dest` (count them only, when None); one more is a
    refusal, whatever the header said."""
    if dest is None:
        return _drain(source, None, allowed, max_bytes, what)
    dest.parent.mkdir(parents=True, exist_ok=True)
    with dest.open("wb") as out:
        copied = _drain(source, out.write, allowed, max_bytes, what)
    dest.chmod(0o644)
    return copied


def _drain(
    source: IO[bytes],
    write: Callable[[bytes], object] | None,
    allowed: int,
    max_bytes: int,
    what: str,
) -> int:
    copied = 0
    while chunk := source.read(_CHUNK):
        copied += len(chunk)
        if copied > allowed:
            raise PackageError(f"the {what} unpacks to more than {max_bytes} bytes")
        if write is not None:
            write(chunk)
    return copied
