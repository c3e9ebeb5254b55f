"""Topology code packages: how a client packs a topology's directory and how a supervisor
unpacks it, safely.

A package is a gzip'd tar of the directory holding the topology file, or a Storm jar (a zip;
shell components' scripts under its `resources/`, as Storm packs them). Unpacking refuses
absolute paths, '..', links and special files, and bounds the entries and the bytes written,
so a hostile package cannot write outside its directory, fill the disk or keep a supervisor
busy for minutes.
"""

from __future__ import annotations

import io
import shutil
import stat
import tarfile
import zipfile
import zlib
from pathlib import Path
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
    """Unpack `package` into `target`, entry by entry as the gzip stream is read, counting
    entries and the bytes actually written (a header's size is never trusted alone: a
    4 MB package once unpacked to 904 MB, and one of 200,000 entries took 72 s). On any
    refusal `target` is removed, so a half-unpacked package is never mistaken for code."""
    target.mkdir(parents=True, exist_ok=True)
    root = target.resolve()
    if is_zip(package):
        _unpack_zip(package, root, max_bytes, max_entries)
        return
    try:
        with tarfile.open(package, mode="r|gz") as tar:
            entries = written = 0
            for m in tar:
                entries += 1
                if entries > max_entries:
                    raise PackageError(f"package has more than {max_entries} entries")
                dest = _checked_destination(root, m)
                if m.isdir():
                    dest.mkdir(parents=True, exist_ok=True)
                    continue
                if m.size > max_bytes - written:
                    raise PackageError(f"package unpacks to more than {max_bytes} bytes")
                source = tar.extractfile(m)
                assert source is not None  # a regular file, checked above
                written += _copy_bounded(source, dest, max_bytes - written, max_bytes)
    except PackageError:
        shutil.rmtree(target, ignore_errors=True)
        raise
    except (tarfile.TarError, EOFError, OSError, zlib.error) as exc:
        shutil.rmtree(target, ignore_errors=True)
        raise PackageError(f"cannot unpack {package.name}: {exc}") from exc


def is_zip(package: Path) -> bool:
    """A Storm jar (a zip, its scripts under resources/) rather than squall's gzip'd tar."""
    with package.open("rb") as f:
        return f.read(4) == _ZIP_MAGIC


def _unpack_zip(package: Path, root: Path, max_bytes: int, max_entries: int) -> None:
    """A jar unpacked with the tar's rules: plain files and directories only, inside
    `root`, bounded in entries and in the bytes actually written."""
    try:
        with zipfile.ZipFile(package) as jar:
            infos = jar.infolist()
            if len(infos) > max_entries:
                raise PackageError(f"package has more than {max_entries} entries")
            written = 0
            for info in infos:
                dest = _zip_destination(root, info)
                if info.is_dir():
                    dest.mkdir(parents=True, exist_ok=True)
                    continue
                with jar.open(info) as source:
                    written += _copy_bounded(source, dest, max_bytes - written, max_bytes)
    except PackageError:
        shutil.rmtree(root, ignore_errors=True)
        raise
    except (zipfile.BadZipFile, EOFError, OSError, zlib.error, RuntimeError) as exc:
        shutil.rmtree(root, ignore_errors=True)
        raise PackageError(f"cannot unpack {package.name}: {exc}") from exc


def _zip_destination(root: Path, info: zipfile.ZipInfo) -> Path:
    dest = (root / info.filename).resolve()
    if info.filename.startswith("/") or not dest.is_relative_to(root) or dest == root:
        raise PackageError(f"package entry {info.filename!r} escapes its directory")
    mode = (info.external_attr >> 16) & 0o170000
    if mode and mode not in (stat.S_IFREG, stat.S_IFDIR):
        raise PackageError(f"package entry {info.filename!r} is not a plain file")
    return dest


def _checked_destination(root: Path, m: tarfile.TarInfo) -> Path:
    dest = (root / m.name).resolve()
    if m.name.startswith("/") or not dest.is_relative_to(root) or dest == root and m.isfile():
        raise PackageError(f"package entry {m.name!r} escapes its directory")
    if not (m.isfile() or m.isdir()):
        raise PackageError(f"package entry {m.name!r} is not a plain file")
    return dest


def _copy_bounded(source: IO[bytes], dest: Path, allowed: int, max_bytes: int) -> int:
    """Copy at most `allowed` bytes; one more is a refusal, whatever the header said."""
    dest.parent.mkdir(parents=True, exist_ok=True)
    copied = 0
    with dest.open("wb") as out:
        while chunk := source.read(_CHUNK):
            copied += len(chunk)
            if copied > allowed:
                raise PackageError(f"package unpacks to more than {max_bytes} bytes")
            out.write(chunk)
    dest.chmod(0o644)
    return copied
