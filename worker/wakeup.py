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
        # Two setters may both write; a setter that writes after a clear read the fd but
        # saw the flag still set leaves it readable while clear: the next wait returns at
        # once, and the clear after it empties the fd (one idle round, no spin).
        if not self._flag:
            self._flag = True
            with contextlib.suppress(BlockingIOError):  # a full pipe: readable already
                os.write(self._write_fd, b"\x01\x00\x00\x00\x00\x00\x00\x00")

    def clear(self) -> None:
        # The fd first, then the flag: the other way round, a set between the two (the
        # read lets go of the GIL) would be read away, leaving the flag set and the fd
        # empty, and no later set would write again: a poll over the fd would sleep on.
        with contextlib.suppress(BlockingIOError):  # nothing (more) to read
            while os.read(self._read_fd, 4096) and self._read_fd != self._write_fd:
                pass  # a pipe: read on; an eventfd reads all at once
        self._flag = False

    def wait(self, timeout: float | None = None) -> bool:
        if not self._flag:
            poll = select.poll()
            poll.register(self._read_fd, select.POLLIN)
            poll.poll(None if timeout is None else poll_millis(timeout))
        return self._flag

    def __del__(self) -> None:  # no thread can set it any more: its fds may go
        for fd in {getattr(self, "_read_fd", None), getattr(self, "_write_fd", None)}:
            if fd is not None:
                os.close(fd)


def poll_millis(timeout: float) -> int:
    """A timeout in seconds as a poll's whole milliseconds, rounded up (a poll that ends
    early only makes a round with nothing to do); never negative, which a poll reads as
    "for ever" where threading.Event.wait returns at once."""
    return max(0, math.ceil(timeout * 1000))
