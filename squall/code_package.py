"""Topology code packages: how a client packs a topology's directory and how a supervisor
unpacks it, safely.

A package is a gzip'd tar of the directory holding the topology file. Unpacking refuses
absolute paths, '..', links and special files, and bounds the unpacked size, so a hostile
package cannot write outside its directory or fill the disk.
"""

from __future__ import annotations

import io
import tarfile
from pathlib import Path

CODE_FILE = "code.tgz"
STRUCTURE_FILE = "stormcode.json"
CONF_FILE = "stormconf.json"
STORED_FILES = (CODE_FILE, STRUCTURE_FILE, CONF_FILE)

MAX_UNPACKED_BYTES = 1 << 30
_SKIP_DIRS = {"__pycache__", ".git", ".venv", ".squall", "node_modules"}


class PackageError(ValueError):
    """A code package is malformed or tries to escape its directory."""


def pack_directory(directory: Path, max_bytes: int) -> bytes:
    """The directory's Python sources and data, skipping caches, VCS and hidden entries."""
    buf = io.BytesIO()
    with tarfile.open(fileobj=buf, mode="w:gz") as tar:
        for path in sorted(directory.rglob("*")):
            rel = path.relative_to(directory)
            if any(part in _SKIP_DIRS or part.startswith(".") for part in rel.parts):
                continue
            if path.is_file() and not path.is_symlink():
                tar.add(path, arcname=str(rel), recursive=False)
            if buf.tell() > max_bytes:
                raise PackageError(
                    f"{directory} packs to more than {max_bytes} bytes; "
                    "keep large data out of the topology's directory"
                )
    return buf.getvalue()


def unpack(package: Path, target: Path, max_bytes: int = MAX_UNPACKED_BYTES) -> None:
    target.mkdir(parents=True, exist_ok=True)
    root = target.resolve()
    total = 0
    try:
        with tarfile.open(package, mode="r:gz") as tar:
            members = tar.getmembers()
            for m in members:
                dest = (root / m.name).resolve()
                if m.name.startswith("/") or not dest.is_relative_to(root):
                    raise PackageError(f"package entry {m.name!r} escapes its directory")
                if not (m.isfile() or m.isdir()):
                    raise PackageError(f"package entry {m.name!r} is not a plain file")
                total += m.size
                if total > max_bytes:
                    raise PackageError(f"package unpacks to more than {max_bytes} bytes")
            tar.extractall(root, members=members, filter="data")
    except (tarfile.TarError, EOFError, OSError) as exc:
        raise PackageError(f"cannot unpack {package.name}: {exc}") from exc
