"""Topology code and descriptions: kept in the durable Store (so every nimbus can serve
them), cached as files under this nimbus's stormdist directory for chunked downloads.

Supervisors download through beginFileDownload/downloadChunk. Only the files of this store
can be named, as `[topology-id]/[file]`, so a hostile name cannot read anything else on the
nimbus host. Downloads run on Thrift threads, beside the controller thread's saves and
removals, so the file cache and the downloads in progress are under one lock.
"""

from __future__ import annotations

import json
import secrets
import shutil
import threading
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from squall import thrift_api as T
from squall.code_package import CODE_FILE, CONF_FILE, STORED_FILES, STRUCTURE_FILE
from squall.nimbus.store import Store
from squall.structure import TopologyStructure
from squall.validation import name_problem

CHUNK_BYTES = 300 * 1024


class CodeUnreadable(RuntimeError):
    """Nimbus's cached copy of a topology file cannot be read. Its supervisors reported only
    the OS error ("Is a directory"), naming neither whose copy it was nor the fix."""


def unreadable_message(path: Path, exc: OSError) -> str:
    """What a supervisor's fetch reports: the file, the OS's reason, and the way out."""
    reason = exc.strerror or str(exc)
    return (
        f"nimbus cannot read its copy {path} ({reason}): remove {path.parent} on the nimbus "
        "host and nimbus writes it again from its store"
    )


@dataclass
class Download:
    path: Path
    offset: int
    last_used: float  # monotonic


@dataclass
class CodeStore:
    directory: Path
    store: Store
    downloads: dict[str, Download] = field(default_factory=dict)
    lock: threading.Lock = field(default_factory=threading.Lock)

    def __post_init__(self) -> None:
        self.directory.mkdir(parents=True, exist_ok=True)

    def topology_ids(self) -> set[str]:
        return self.store.topology_ids()

    def save(
        self,
        tid: str,
        name: str,
        code: Path,
        structure: TopologyStructure,
        conf: dict[str, Any],
        now: float,
    ) -> None:
        self.store.save_topology(tid, name, conf, structure.to_json(), code.read_bytes(), now)
        code.unlink(missing_ok=True)

    def _cached(self, tid: str) -> Path:
        """The topology's files on local disk, written from the Store on first use."""
        target = self.directory / tid
        if all((target / f).exists() for f in STORED_FILES):
            return target
        stored = self.store.topology(tid)
        code = self.store.code(tid)
        if stored is None or code is None:
            raise T.NotAliveException(msg=f"no stored topology {tid!r}")
        target.mkdir(parents=True, exist_ok=True)
        (target / CODE_FILE).write_bytes(code)
        (target / STRUCTURE_FILE).write_text(json.dumps(stored.structure))
        (target / CONF_FILE).write_text(json.dumps(stored.conf))
        return target

    def structure(self, tid: str) -> TopologyStructure:
        stored = self.store.topology(tid)
        if stored is None:
            raise T.NotAliveException(msg=f"no stored topology {tid!r}")
        return TopologyStructure.from_json(stored.structure)

    def conf(self, tid: str) -> dict[str, Any]:
        stored = self.store.topology(tid)
        if stored is None:
            raise T.NotAliveException(msg=f"no stored topology {tid!r}")
        return stored.conf

    def update_conf(self, tid: str, conf: dict[str, Any]) -> None:
        self.store.update_conf(tid, conf)
        with self.lock:  # re-cached on next download
            shutil.rmtree(self.directory / tid, ignore_errors=True)

    def remove(self, tid: str) -> None:
        self.store.remove_topology(tid)
        with self.lock:
            shutil.rmtree(self.directory / tid, ignore_errors=True)

    # --- downloads ---

    def begin_download(self, name: str, now: float) -> str:
        tid, _, file = name.partition("/")
        if name_problem(tid) or file not in STORED_FILES:
            raise T.NotAliveException(msg=f"no stored file {name!r}")
        download_id = secrets.token_hex(12)
        with self.lock:
            self.downloads[download_id] = Download(self._cached(tid) / file, 0, now)
        return download_id

    def read_chunk(self, download_id: str, now: float) -> bytes:
        """The next chunk; an empty chunk means the file is complete (and the id is gone)."""
        with self.lock:
            download = self.downloads.get(download_id)
            if download is None:
                raise T.NotAliveException(msg=f"no download {download_id!r} in progress")
            try:
                with download.path.open("rb") as f:
                    f.seek(download.offset)
                    chunk = f.read(CHUNK_BYTES)
            except OSError as exc:
                del self.downloads[download_id]
                raise CodeUnreadable(unreadable_message(download.path, exc)) from exc
            download.offset += len(chunk)
            download.last_used = now
            if not chunk:
                del self.downloads[download_id]
            return chunk

    def expire_downloads(self, now: float, max_idle: float) -> None:
        with self.lock:
            idle = [d for d, x in self.downloads.items() if now - x.last_used > max_idle]
            for download_id in idle:
                del self.downloads[download_id]
