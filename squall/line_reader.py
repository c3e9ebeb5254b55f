"""A partition file's lines as Arrow strings, read in blocks: no Python object per line, so a
spout can emit hundreds of thousands of lines a second from one core.

A line ends with "\\n"; a "\\r" before it is dropped, so files written on Windows read the
same. Invalid UTF-8 becomes U+FFFD (logged once per file) instead of stopping the
partition: the line is kept, and its offset stays right.
"""

from __future__ import annotations

import logging
from pathlib import Path

import pyarrow as pa
import pyarrow.compute as pc

log = logging.getLogger("squall.sources")

BLOCK = 1 << 20  # bytes a read asks for


class LineReader:
    """With `follow`, the file is an append-only log: a last line whose newline is not
    written yet is held back until it is. Without, the file is complete and its last line
    needs no newline."""

    def __init__(self, path: Path, follow: bool) -> None:
        self.path = path
        self.follow = follow
        self.file = path.open("rb")
        self.lines = pa.array([], pa.string())  # complete lines read, not yet returned
        self.fragment: list[bytes] = []  # the start of a line whose newline is not read yet
        self.at_end = False  # the last read from the file found nothing more
        self.warned = False

    def read(self, count: int) -> pa.Array:
        """Up to `count` lines; fewer only at the end of the file (for now, in follow mode)."""
        self.at_end = False
        while len(self.lines) < count:
            block = self.file.read(BLOCK)
            if not block:
                self.at_end = True
                if self.fragment and not self.follow:
                    last, self.fragment = b"".join(self.fragment), []
                    self._add(last + b"\n")
                break
            self._add(block)
        lines, self.lines = self.lines[:count], self.lines[count:]
        return lines

    def skip(self, count: int) -> int:
        """Pass over up to `count` lines (a consumer resuming at its committed offset);
        returns how many there were."""
        skipped = 0
        while skipped < count:
            n = len(self.read(min(count - skipped, 100_000)))
            if not n:
                break
            skipped += n
        return skipped

    def close(self) -> None:
        self.file.close()

    def _add(self, block: bytes) -> None:
        end = block.rfind(b"\n")
        if end < 0:  # a line longer than a block: kept in pieces, joined once
            self.fragment.append(block)
            return
        data = b"".join([*self.fragment, block[:end]])
        self.fragment = [block[end + 1 :]] if end + 1 < len(block) else []
        whole = pa.array([data], pa.binary())
        lines = pc.list_flatten(pc.split_pattern(whole, "\n"))
        try:
            lines = lines.cast(pa.string())
        except pa.ArrowInvalid:
            if not self.warned:
                log.warning("%s: invalid UTF-8, replaced with U+FFFD", self.path)
                self.warned = True
            text = data.decode("utf-8", "replace")
            lines = pc.list_flatten(pc.split_pattern(pa.array([text]), "\n"))
        if pc.any(pc.ends_with(lines, "\r")).as_py():
            lines = pc.replace_substring_regex(lines, "\r$", "")
        self.lines = pa.concat_arrays([self.lines, lines]) if len(self.lines) else lines
