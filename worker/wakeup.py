"""An Event that a poll can wait on together with sockets: the worker's shared thread idles
in one poll over its transport's receiving socket and this (executor_group.py), so that it
reads what peers send itself and no receive thread hands each message over through the GIL.

Setting it writes to an eventfd (a pipe where there is none) only when it was clear, and
only from a thread other than its owner (the one that waits on it, which is not waiting
while it sets): the tasks of a group put into each other's queues all the time, and need
no system call for it. Clearing reads the fd only when another thread may have written.
"""

from __future__ import annotations

import contextlib
import math
import os
import select
import threading


class FdWake(threading.Event):
    """threading.Event's set/clear/is_set/wait, and `fileno` for a poll over it and more."""

    def __init__(self, owner: threading.Thread | None = None) -> None:
        super().__init__()
        if hasattr(os, "eventfd"):  # Linux
            self._read_fd = self._write_fd = os.eventfd(0, os.EFD_NONBLOCK | os.EFD_CLOEXEC)
        else:
            self._read_fd, self._write_fd = os.pipe()
            os.set_blocking(self._read_fd, False)
            os.set_blocking(self._write_fd, False)
        self.owner = owner  # the thread that waits on it (None: any thread may)
        self._flag = False
        self._written = False  # the fd may be readable: the next clear reads it

    def fileno(self) -> int:
        return self._read_fd

    def is_set(self) -> bool:
        return self._flag

    def set(self) -> None:
        if not self._flag:
            self._flag = True
            if threading.current_thread() is not self.owner:
                self._written = True
                with contextlib.suppress(BlockingIOError):  # a full pipe: readable already
                    if self._write_fd == self._read_fd:
                        os.eventfd_write(self._write_fd, 1)
                    else:
                        os.write(self._write_fd, b"\x01")

    def clear(self) -> None:
        # The fd before the flag: the other way round, a set between the two (the read
        # lets go of the GIL) would be read away, leaving the flag set over an empty fd.
        # A write that lands after the read leaves the fd readable while clear: the next
        # wait's poll returns at once and marks it (`polled`), and the clear after it reads
        # it (one round with nothing to do, no spin).
        if self._written:
            self._written = False
            with contextlib.suppress(BlockingIOError):  # nothing (more) to read
                while os.read(self._read_fd, 4096) and self._read_fd != self._write_fd:
                    pass  # a pipe: read on; an eventfd reads all at once
        self._flag = False

    def polled(self) -> None:
        """A poll over the fd (and more) returned: the next clear reads the fd."""
        self._written = True

    def wait(self, timeout: float | None = None) -> bool:
        if not self._flag:
            poll = select.poll()
            poll.register(self._read_fd, select.POLLIN)
            if poll.poll(None if timeout is None else poll_millis(timeout)):
                self._written = True
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
