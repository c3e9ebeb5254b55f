"""A worker's stdout and stderr, written by the supervisor into size-capped rotating files.

The worker's output goes through a pipe to a thread of the supervisor, not straight into a
file the worker holds: a spout failing in a loop (or user code printing in a loop, or the
JVM that PySpark starts) can then never grow its log past `worker.log.max.bytes` times
`worker.log.backups + 1`, whatever it writes and however (logging, print, os.write on fd 2).
The thread also keeps the last few KB, so a worker that dies has its last lines reported as
its topology's error. Storm rotates worker.log at 100 MB keeping 9 (its worker.xml); those
are the defaults.
"""

from __future__ import annotations

import os
import threading
from collections.abc import Mapping
from pathlib import Path
from typing import IO, Any

TAIL_BYTES = 4096
_READ = 1 << 16


def log_caps(topology: Mapping[str, Any], supervisor: Mapping[str, Any]) -> tuple[int, int]:
    """A worker's log size and backups: its topology's `worker.log.max.bytes` and
    `worker.log.backups`, never above its supervisor's (the host's disk is the operator's);
    at submit they were accepted and then silently ignored."""
    keys = ("worker.log.max.bytes", "worker.log.backups")
    max_bytes, backups = (min(topology.get(k, supervisor[k]), supervisor[k]) for k in keys)
    return max_bytes, backups


class RotatingLog:
    """`path`, rotated to path.1 ... path.N before it would pass `max_bytes`."""

    def __init__(self, path: Path, max_bytes: int, backups: int) -> None:
        self.path, self.max_bytes, self.backups = path, max_bytes, backups
        self.file = path.open("ab")
        self.size = self.file.tell()

    def write(self, data: bytes) -> None:
        while data:
            room = self.max_bytes - self.size
            if room <= 0:
                self.rotate()
                continue
            self.file.write(data[:room])
            self.size += min(room, len(data))
            data = data[room:]
        self.file.flush()

    def rotate(self) -> None:
        self.file.close()
        for i in range(self.backups - 1, 0, -1):
            older = self.path.with_name(f"{self.path.name}.{i}")
            if older.exists():
                older.replace(self.path.with_name(f"{self.path.name}.{i + 1}"))
        if self.backups:
            self.path.replace(self.path.with_name(f"{self.path.name}.1"))
        self.file = self.path.open("wb")
        self.size = 0

    def close(self) -> None:
        self.file.close()


class LogPump(threading.Thread):
    """Copies a worker's output pipe into its RotatingLog until the pipe closes."""

    def __init__(self, pipe: IO[bytes], log: RotatingLog) -> None:
        super().__init__(name=f"log-{log.path.name}", daemon=True)
        self.pipe, self.log = pipe, log
        self._tail = bytearray()
        self._lock = threading.Lock()
        self.lost = 0  # bytes of output the log could not take since it last could

    def run(self) -> None:
        fd = self.pipe.fileno()
        try:
            while chunk := os.read(fd, _READ):
                self._write(chunk)
                with self._lock:
                    self._tail += chunk
                    del self._tail[:-TAIL_BYTES]
        except OSError:
            pass  # the pipe broke
        finally:
            self.pipe.close()
            self.log.close()

    def _write(self, chunk: bytes) -> None:
        """A write that fails (the disk is full) loses that output, not the pipe: a pump
        that stopped reading left the worker's prints blocked, then failing with EPIPE, for
        the rest of its life. The log says how much went missing once it can be written."""
        try:
            if self.lost:  # "up to": a failed flush keeps its bytes buffered for the next one
                self.log.write(f"[squall: up to {self.lost} bytes of output lost]\n".encode())
                self.lost = 0
            self.log.write(chunk)
        except (OSError, ValueError):  # ValueError: the log was closed under it
            self.lost += len(chunk)

    def tail(self, lines: int = 20) -> str:
        """The last `lines` lines the worker wrote (at most TAIL_BYTES)."""
        with self._lock:
            text = bytes(self._tail).decode("utf-8", "replace")
        return "\n".join(text.rstrip("\n").splitlines()[-lines:])
