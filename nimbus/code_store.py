"""Topology code and its stored description, one directory per topology (Storm's stormdist).

Supervisors download these files through beginFileDownload/downloadChunk. Only the files of
this store can be named, as `[topology-id]/[file]`, so a hostile name cannot read anything
else on the nimbus host.
"""

from __future__ import annotations

import json
import secrets
import shutil
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from squall import thrift_api as T
from squall.code_package import CODE_FILE, CONF_FILE, STORED_FILES, STRUCTURE_FILE
from squall.structure import TopologyStructure
from squall.validation import name_problem

CHUNK_BYTES = 300 * 1024


@dataclass
class Download:
    path: Path
    offset: int
    last_used: float  # monotonic


@dataclass
class CodeStore:
    directory: Path
    downloads: dict[str, Download] = field(default_factory=dict)

    def __post_init__(self) -> None:
        self.directory.mkdir(parents=True, exist_ok=True)

    def topology_ids(self) -> set[str]:
        return {p.name for p in self.directory.iterdir() if p.is_dir()}

    def store(
        self, topology_id: str, code: Path, structure: TopologyStructure, conf: dict[str, Any]
    ) -> None:
        target = self.directory / topology_id
        target.mkdir(parents=True)
        shutil.move(str(code), target / CODE_FILE)
        (target / STRUCTURE_FILE).write_text(json.dumps(structure.to_json()))
        (target / CONF_FILE).write_text(json.dumps(conf))

    def structure(self, topology_id: str) -> TopologyStructure:
        data = json.loads((self.directory / topology_id / STRUCTURE_FILE).read_text())
        return TopologyStructure.from_json(data)

    def conf(self, topology_id: str) -> dict[str, Any]:
        return json.loads((self.directory / topology_id / CONF_FILE).read_text())

    def remove(self, topology_id: str) -> None:
        shutil.rmtree(self.directory / topology_id, ignore_errors=True)

    # --- downloads ---

    def begin_download(self, name: str, now: float) -> str:
        topology_id, _, file = name.partition("/")
        path = self.directory / topology_id / file
        if name_problem(topology_id) or file not in STORED_FILES or not path.is_file():
            raise T.NotAliveException(msg=f"no stored file {name!r}")
        download_id = secrets.token_hex(12)
        self.downloads[download_id] = Download(path, 0, now)
        return download_id

    def read_chunk(self, download_id: str, now: float) -> bytes:
        """The next chunk; an empty chunk means the file is complete (and the id is gone)."""
        download = self.downloads.get(download_id)
        if download is None:
            raise T.NotAliveException(msg=f"no download {download_id!r} in progress")
        with download.path.open("rb") as f:
            f.seek(download.offset)
            chunk = f.read(CHUNK_BYTES)
        download.offset += len(chunk)
        download.last_used = now
        if not chunk:
            del self.downloads[download_id]
        return chunk

    def expire_downloads(self, now: float, max_idle: float) -> None:
        for download_id in [d for d, x in self.downloads.items() if now - x.last_used > max_idle]:
            del self.downloads[download_id]
