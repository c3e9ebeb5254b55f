"""The last lines written to this process's stderr while something starts, children included.

When the SparkSession's JVM exits before its gateway is up (spark-submit refuses the master
URL, the heap size is invalid), PySpark raises only "Java gateway process exited before
sending its port number"; the reason is what the JVM printed to the stderr it inherited. While
a `StderrTail` is open, fd 2 is a pipe whose every line is copied on to where fd 2 went before
(the worker's log loses nothing) and kept, the last `keep` of them. A child started meanwhile
keeps the pipe as its stderr for life, so the copying thread runs until the child exits.
"""

from __future__ import annotations

import collections
import contextlib
import os
import sys
import threading
from types import TracebackType


class StderrTail:
    def __init__(self, keep: int = 200) -> None:
        self._lines: collections.deque[str] = collections.deque(maxlen=keep)
        self._lock = threading.Lock()
        self._saved = -1

    def lines(self) -> list[str]:
        with self._lock:
            return list(self._lines)

    def __enter__(self) -> StderrTail:
        sys.stderr.flush()
        self._saved = os.dup(2)
        read, write = os.pipe()
        os.dup2(write, 2)
        os.close(write)
        threading.Thread(target=self._copy, args=(read, self._saved), daemon=True).start()
        return self

    def __exit__(
        self, kind: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        sys.stderr.flush()
        os.dup2(self._saved, 2)  # children started meanwhile keep the pipe

    def _copy(self, read: int, out: int) -> None:
        with open(read, "rb") as pipe, contextlib.suppress(OSError):
            for line in iter(pipe.readline, b""):
                view = memoryview(line)
                while view:
                    view = view[os.write(out, view) :]
                with self._lock:
                    self._lines.append(line.decode(errors="replace").rstrip("\n"))
        os.close(out)
