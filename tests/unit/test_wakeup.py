"""FdWake: threading.Event's behaviour, and a file descriptor a poll can wait on with sockets
(the worker's shared thread idles in one poll over it and its receiving socket)."""

import os
import select
import threading

from squall.local import wait_for
from squall.worker import wakeup
from squall.worker.wakeup import FdWake


def readable(wake: FdWake) -> bool:
    return bool(select.select([wake], [], [], 0)[0])


def test_set_and_clear_as_an_event():
    wake = FdWake()
    assert not wake.is_set() and not wake.wait(0) and not readable(wake)
    wake.set()
    wake.set()  # a second set while set writes nothing more
    assert wake.is_set() and wake.wait(0) and readable(wake)
    wake.clear()  # one clear empties the fd, however many sets came before
    assert not wake.is_set() and not readable(wake)


def test_a_set_while_a_clear_reads_leaves_no_set_flag_over_an_empty_fd(monkeypatch):
    """A set from another thread while clear reads the fd (the read lets go of the GIL):
    set and unreadable, no later set would write, and a poll over the fd would sleep on."""
    wake = FdWake()
    wake.set()
    read = os.read

    def read_with_a_set_meanwhile(fd: int, n: int) -> bytes:
        monkeypatch.setattr(wakeup.os, "read", read)
        wake.set()
        return read(fd, n)

    monkeypatch.setattr(wakeup.os, "read", read_with_a_set_meanwhile)
    wake.clear()
    assert wake.is_set() == readable(wake)
    wake.set()
    assert readable(wake)


def test_a_write_landing_after_a_clear_is_read_by_the_clear_after_the_next_wait():
    """A setter's write that lands after clear read the fd leaves it readable while clear:
    the next wait returns at once, and must leave the next clear reading it (else every
    poll over it returns at once: a busy loop)."""
    wake = FdWake()
    wake.set()
    wake.clear()
    os.eventfd_write(wake.fileno(), 1)  # the late write
    assert readable(wake) and not wake.is_set()
    assert wake.wait(10) is False  # returns at once: readable
    wake.clear()
    assert not readable(wake)


def test_a_set_from_the_owner_thread_writes_nothing_but_counts():
    """The thread that waits is not waiting while it sets: no system call is needed."""
    wake = FdWake(owner=threading.current_thread())
    wake.set()
    assert wake.is_set() and wake.wait(0) and not readable(wake)
    wake.clear()
    other = threading.Thread(target=wake.set)
    other.start()
    other.join(10)
    assert wake.is_set() and readable(wake)  # another thread's set wakes a poll over it
    wake.clear()
    assert not readable(wake)


def test_a_negative_timeout_returns_at_once_as_an_events_does():
    assert FdWake().wait(-1) is False


def test_a_set_from_another_thread_ends_a_wait():
    wake = FdWake()
    returned = []
    waiter = threading.Thread(target=lambda: returned.append(wake.wait(60)), daemon=True)
    waiter.start()
    threading.Thread(target=wake.set).start()
    wait_for(lambda: returned, 10, "the wait to end")
    assert returned == [True]


def test_a_wait_ends_at_its_timeout_when_nothing_sets_it():
    assert FdWake().wait(0.01) is False


def test_a_wake_made_and_dropped_many_times_leaves_no_descriptor_open():
    before = len(os.listdir("/proc/self/fd"))
    for _ in range(2000):
        FdWake().set()
    assert len(os.listdir("/proc/self/fd")) <= before + 1
