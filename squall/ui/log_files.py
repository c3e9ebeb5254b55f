"""The log viewer's pure parts: Storm's log file names, the on-disk files they stand for,
the byte range a page shows, a search's matches and the links Storm's UI and REST give.

Storm names a worker's log "<topology-id>/<port>/worker.log" (its logviewer's `file`); a
squall supervisor writes it as <storm.local.dir>/supervisor/logs/worker-<id>-<port>.log,
rotated to .1 ... .N, and a worker's profiling dumps beside it as
worker-<id>-<port>-<kind>-<ms>.txt. Names are checked strictly (no "/", "..", or anything
outside the worker's own files), so a `file` can never reach another file of the host.

Storm runs a logviewer on each host; here `squall ui` is that logviewer for the host it runs
on, so a worker's links name the worker's host with the UI's scheme and port: a multi-host
cluster runs `squall ui` on each supervisor host (as Storm runs `storm logviewer`).
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any
from urllib.parse import quote, urlencode

from .access import is_loopback
from .errors import BadRequest

TOPOLOGY_ID = r"[A-Za-z0-9_][A-Za-z0-9._-]{0,250}"
FILE = re.compile(
    rf"(?P<tid>{TOPOLOGY_ID})/(?P<port>[0-9]{{1,5}})/"
    r"(?P<name>worker\.log(?:\.[0-9]{1,3})?|(?:jstack|heap|profile)-[0-9]{1,16}\.txt)"
)
DEFAULT_LENGTH = 51200  # Storm's logviewer page: the last 50 KiB
MAX_LENGTH = 10 * 1024 * 1024
SEARCH_CONTEXT = 128  # bytes before and after a match, as Storm's search
MAX_MATCHES = 100
MAX_NEEDLE = 1024


@dataclass(frozen=True)
class LogFile:
    topology_id: str
    port: int
    name: str  # "worker.log", "worker.log.1", "jstack-<ms>.txt"

    @property
    def storm_name(self) -> str:
        return f"{self.topology_id}/{self.port}/{self.name}"

    @property
    def disk_name(self) -> str:
        """The file's name in a supervisor's logs directory."""
        prefix = f"worker-{self.topology_id}-{self.port}"
        if self.name.startswith("worker.log"):
            return prefix + ".log" + self.name[len("worker.log") :]
        return f"{prefix}-{self.name}"


def parse_file(raw: str | None) -> LogFile:
    """Storm's `file` parameter, checked; BadRequest for anything else."""
    match = FILE.fullmatch(raw or "")
    if match is None or ".." in match["tid"]:
        raise BadRequest(
            f"file must be <topology-id>/<port>/worker.log (or a rotated or dump file of "
            f"that worker); got {raw!r:.120}"
        )
    return LogFile(match["tid"], int(match["port"]), match["name"])


def files_of(disk_names: list[str], topology_id: str, port: int | None) -> list[str]:
    """Storm's names of the files of `topology_id` (and `port`) among a directory's names."""
    pattern = re.compile(
        rf"worker-{re.escape(topology_id)}-([0-9]{{1,5}})"
        r"(\.log(?:\.[0-9]{1,3})?|-(?:jstack|heap|profile)-[0-9]{1,16}\.txt)"
    )
    out = []
    for name in disk_names:
        match = pattern.fullmatch(name)
        if match is None or (port is not None and int(match[1]) != port):
            continue
        rest = match[2]
        storm = "worker" + rest if rest.startswith(".log") else rest[1:]
        out.append(f"{topology_id}/{match[1]}/{storm}")
    return sorted(out)


def _number(raw: str | None, what: str) -> int | None:
    if raw is None or raw == "":
        return None
    if not re.fullmatch(r"[0-9]{1,15}", raw):
        raise BadRequest(f"{what} must be a number of bytes; got {raw!r:.40}")
    return int(raw)


def byte_range(size: int, start: str | None, length: str | None) -> tuple[int, int]:
    """(start, length) of the page to show: Storm's defaults are the file's last 50 KiB."""
    wanted = _number(length, "length")
    wanted = DEFAULT_LENGTH if wanted is None else min(wanted, MAX_LENGTH)
    first = _number(start, "start")
    first = max(0, size - wanted) if first is None else min(first, size)
    return first, min(wanted, size - first)


@dataclass(frozen=True)
class SearchAsk:
    needle: bytes
    limit: int
    offset: int


def search_ask(query: Mapping[str, str]) -> SearchAsk:
    """Storm's search parameters: search-string, num-matches, start-byte-offset."""
    needle = query.get("search-string") or ""
    if not needle or len(needle) > MAX_NEEDLE:
        raise BadRequest(f"search-string must be 1 to {MAX_NEEDLE} characters")
    limit = _number(query.get("num-matches"), "num-matches") or 10
    offset = _number(query.get("start-byte-offset"), "start-byte-offset") or 0
    return SearchAsk(needle.encode(), min(limit, MAX_MATCHES), offset)


def search(data: bytes, ask: SearchAsk, file: LogFile, link: str) -> dict[str, Any]:
    """Storm's search answer: up to `limit` matches from `offset`, each with the text around
    it and a link to the page that shows it."""
    matches: list[dict[str, Any]] = []
    at = ask.offset
    while len(matches) < ask.limit:
        found = data.find(ask.needle, at)
        if found < 0:
            break
        end = found + len(ask.needle)
        page = max(0, found - DEFAULT_LENGTH // 2)
        matches.append(
            {
                "byteOffset": found,
                "beforeString": data[max(0, found - SEARCH_CONTEXT) : found].decode(
                    errors="replace"
                ),
                "afterString": data[end : end + SEARCH_CONTEXT].decode(errors="replace"),
                "matchString": ask.needle.decode(errors="replace"),
                "logviewerURL": f"{link}&{urlencode({'start': page})}",
            }
        )
        at = end
    return {
        "fileName": file.storm_name,
        "searchString": ask.needle.decode(errors="replace"),
        "startByteOffset": ask.offset,
        "nextByteOffset": at if len(matches) == ask.limit else None,
        "matches": matches,
    }


@dataclass(frozen=True)
class LogLinks:
    """Where the log viewer of a host answers: this UI's scheme and port on that host."""

    scheme: str
    port: int | None

    @staticmethod
    def from_conf(conf: Mapping[str, Any]) -> LogLinks:
        host = str(conf.get("ui.host") or "127.0.0.1")
        port = conf.get("ui.port")
        return LogLinks(
            "http" if is_loopback(host) else "https", port if isinstance(port, int) else None
        )

    def _base(self, host: str) -> str:
        where = f"[{host}]" if ":" in host and not host.startswith("[") else host
        return f"{self.scheme}://{where}:{self.port}/api/v1"

    def worker(self, host: str | None, port: int | None, topology_id: str | None) -> str:
        """Storm's workerLogLink; "" when the worker's place is not known."""
        if not host or not port or not topology_id or self.port is None:
            return ""
        file = quote(f"{topology_id}/{port}/worker.log", safe="")
        return f"{self._base(host)}/log?file={file}"

    def dumps(self, host: str | None, port: int | None, topology_id: str | None) -> str:
        """Storm's dumplink: the listing of a worker's profiling dumps."""
        if not host or not port or not topology_id or self.port is None:
            return ""
        worker = quote(f"{host}:{port}", safe="")
        return f"{self._base(host)}/dumps/{quote(topology_id, safe='')}/{worker}"


def dump_names(files: list[str]) -> list[str]:
    """The profiling dumps among a worker's Storm file names (files_of), by their own name."""
    return [f.rsplit("/", 1)[1] for f in files if f.endswith(".txt")]
