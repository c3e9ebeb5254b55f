"""An Event that a poll can wait on together with sockets: the worker's shared thread idles
in one poll over its transport's receiving socket and this (executor_group.py), so that it
reads what peers send itself and no receive thread hands each message over through the GIL.

Setting it writes to an eventfd (a pipe where there is none) only when it was clear: a
thread that puts into a queue many times between two rounds makes one system call.
"""

from __future__ import annotations

import contextlib
import math
import os
import select
import threading


class FdWake(threading.Event):
    """threading.Event's set/clear/is_set/wait, and `fileno` for a poll over it and more."""

    def __init__(self) -> None:
        super().__init__()
        if hasattr(os, "eventfd"):  # Linux
            self._read_fd = self._write_fd = os.eventfd(0, os.EFD_NONBLOCK | os.EFD_CLOEXEC)
        else:
            self._read_fd, self._write_fd = os.pipe()
            os.set_blocking(self._read_fd, False)
            os.set_blocking(self._write_fd, False)
        self._flag = False

    def fileno(self) -> int:
        return self._read_fd

    def is_set(self) -> bool:
        return self._flag

    def set(self) -> None:
        # Two setters may both write; a clear between a setter's flag and its write leaves
        # the fd readable while clear: the next wait returns at once, harmlessly.
        if not self._flag:
            self._flag = True
            with contextlib.suppress(BlockingIOError):  # a full pipe: readable already
                os.write(self._write_fd, b"\x01\x00\x00\x00\x00\x00\x00\x00")

    def clear(self) -> None:
        self._flag = False
        with contextlib.suppress(BlockingIOError):  # nothing (more) to read
            while os.read(self._read_fd, 4096) and self._read_fd != self._write_fd:
                pass  # a pipe: read on; an eventfd reads all at once

    def wait(self, timeout: float | None = None) -> bool:
        if not self._flag:
            poll = select.poll()
            poll.register(self._read_fd, select.POLLIN)
            poll.poll(None if timeout is None else math.ceil(timeout * 1000))
        return self._flag

    def __del__(self) -> None:  # no thread can set it any more: its fds may go
        for fd in {getattr(self, "_read_fd", None), getattr(self, "_write_fd", None)}:
            if fd is not None:
                os.close(fd)
