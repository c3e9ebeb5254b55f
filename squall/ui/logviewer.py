"""The log viewer's routes (Storm's logviewer REST API, served by `squall ui` for its own
host): /api/v1/log (a page of a worker's log, by default its tail), /api/v1/download (the
whole file), /api/v1/search?file= (matches with their context), /api/v1/listLogs and
/api/v1/dumps/<topology-id>/<host:port>[/<dump>] (a worker's profiling dumps).

Files are looked for in the logs directories of this host's supervisors (log_dirs). Who may
read them is decided as for every other read of this UI (access.py: its token, or a
certificate in ui.users/nimbus.admins).
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from pathlib import Path
from typing import Any
from urllib.parse import quote

from starlette.requests import Request
from starlette.responses import FileResponse, PlainTextResponse, Response

from . import log_files as L
from .errors import BadRequest


class NoSuchLog(LookupError):
    """A well-formed name this host has no file for; answered with a 404."""


def log_dirs(conf: Mapping[str, Any]) -> list[Path]:
    """This host's supervisors' logs directories: the one of the supervisor sharing the UI's
    storm.local.dir, or, in a `squall local` cluster (the UI's storm.local.dir is
    <cluster>/ui, each supervisor's <cluster>/supervisor<i>), every supervisor's."""
    root = Path(str(conf.get("storm.local.dir") or "storm-local")).resolve()
    found = [root / "supervisor" / "logs"]
    if root.name == "ui":
        found += sorted(root.parent.glob("supervisor*/supervisor/logs"))
    return [d for d in found if d.is_dir()]


def find(conf: Mapping[str, Any], file: L.LogFile) -> Path:
    for directory in log_dirs(conf):
        path = directory / file.disk_name
        if path.is_file() and not path.is_symlink():
            return path
    raise NoSuchLog(f"no log {file.storm_name} on this host")


def read_range(path: Path, start: int, length: int) -> bytes:
    with path.open("rb") as f:
        f.seek(start)
        return f.read(length)


def log_page(conf: Mapping[str, Any], request: Request) -> Response:
    file = L.parse_file(request.query_params.get("file"))
    path = find(conf, file)
    size = path.stat().st_size
    start, length = L.byte_range(
        size, request.query_params.get("start"), request.query_params.get("length")
    )
    headers = {"X-Log-Size": str(size), "X-Log-Start": str(start)}
    text = read_range(path, start, length).decode(errors="replace")
    return PlainTextResponse(text, headers=headers)


def download(conf: Mapping[str, Any], request: Request) -> Response:
    file = L.parse_file(request.query_params.get("file"))
    return FileResponse(
        find(conf, file), media_type="text/plain", filename=file.storm_name.replace("/", "-")
    )


def search(conf: Mapping[str, Any], request: Request) -> Any:
    file = L.parse_file(request.query_params.get("file"))
    ask = L.search_ask(request.query_params)
    path = find(conf, file)
    link = f"/api/v1/log?file={quote(file.storm_name, safe='')}"
    return L.search(path.read_bytes(), ask, file, link)


def list_logs(conf: Mapping[str, Any], request: Request) -> Any:
    tid = request.query_params.get("topoId") or ""
    port = request.query_params.get("port")
    if not tid:
        raise BadRequest("listLogs wants topoId")
    if port is not None and not re.fullmatch(r"[0-9]{1,5}", port):
        raise BadRequest(f"port must be a number; got {port!r:.20}")
    names = [p.name for d in log_dirs(conf) for p in d.iterdir()]
    return L.files_of(names, tid, int(port) if port else None)


def _worker(request: Request) -> tuple[str, int]:
    tid, host_port = request.path_params["tid"], request.path_params["host_port"]
    port = host_port.rpartition(":")[2]
    if not re.fullmatch(L.TOPOLOGY_ID, tid) or not re.fullmatch(r"[0-9]{1,5}", port):
        raise BadRequest("a worker's dumps are at /dumps/<topology-id>/<host>:<port>")
    return tid, int(port)


def list_dumps(conf: Mapping[str, Any], request: Request) -> Any:
    """Storm's /dumps/<topology-id>/<host:port>: the worker's profiling dumps, as links."""
    tid, port = _worker(request)
    names = [p.name for d in log_dirs(conf) for p in d.iterdir()]
    here = request.url.path.rstrip("/")
    return [f"{here}/{quote(n, safe='')}" for n in L.dump_names(L.files_of(names, tid, port))]


def dump_file(conf: Mapping[str, Any], request: Request) -> Response:
    tid, port = _worker(request)
    file = L.parse_file(f"{tid}/{port}/{request.path_params['name']}")
    if not file.name.endswith(".txt"):
        raise BadRequest("a dump is <kind>-<ms>.txt")
    return FileResponse(find(conf, file), media_type="text/plain")
