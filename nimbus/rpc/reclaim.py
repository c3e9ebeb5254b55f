"""Giving back the memory that strangers' connections cost, once they are gone.

Found by bench/thrift_churn.py: 5,000 connections that sent half a TLS hello and left
raised nimbus's RSS by 427 MB, and it stayed. Two causes, both outside squall's code:

- asyncio's SSLProtocol allocates a 256 KiB buffer per TLS connection, and a failed
  handshake leaves the protocol in a reference cycle (its exception's traceback frames hold
  it), freed only when the cyclic collector runs, which counts objects, not bytes: hundreds
  of such buffers waited for it.
- glibc raises its mmap threshold past a freed mmapped block (its "dynamic threshold"), so
  after the first buffers every 256 KiB buffer came from the heap arenas, which keep freed
  memory mapped (and the event loop's thread has its own arena).

So nimbus fixes the mmap threshold at 128 KiB (such buffers are mmapped and unmapped when
freed), and after every RECLAIM_EVERY connections that end unauthenticated it runs the
collector, then malloc_trim on a thread of its own, at most once per TRIM_EVERY_SECS (on
the event loop it took seconds on a heap that had just decoded large requests, holding up
every call; ctypes lets other threads run meanwhile). A collection costs milliseconds;
strangers pay for it in connections, at most once per RECLAIM_EVERY of them.
"""

from __future__ import annotations

import contextlib
import ctypes
import gc
import threading
import time
from typing import Any

M_MMAP_THRESHOLD = -3  # glibc's mallopt parameter
MMAP_THRESHOLD = 128 * 1024
RECLAIM_EVERY = 256
TRIM_EVERY_SECS = 10.0


def _libc() -> Any:
    with contextlib.suppress(OSError):
        libc = ctypes.CDLL("libc.so.6")
        if hasattr(libc, "mallopt") and hasattr(libc, "malloc_trim"):
            return libc
    return None  # not glibc: nothing to tune


LIBC = _libc()


def fix_mmap_threshold() -> bool:
    """Large blocks always mmapped (returned to the system when freed); False off glibc."""
    return bool(LIBC is not None and LIBC.mallopt(M_MMAP_THRESHOLD, MMAP_THRESHOLD))


_trimming = threading.Lock()
_trimmed_at = [float("-inf")]


def _trim() -> None:
    try:
        LIBC.malloc_trim(0)
    finally:
        _trimming.release()


def reclaim(quiet: bool = False) -> None:
    """Collect, and trim unless one did within TRIM_EVERY_SECS (`quiet`: churn has stopped,
    so this is the last chance to give back its memory: trim regardless)."""
    gc.collect()
    now = time.monotonic()
    recent = now - _trimmed_at[0] < TRIM_EVERY_SECS and not quiet
    if LIBC is None or recent or not _trimming.acquire(False):
        return
    _trimmed_at[0] = now
    threading.Thread(target=_trim, name="nimbus-malloc-trim", daemon=True).start()


class Reclaimer:
    """Counts connections that ended unauthenticated; reclaims every `every` of them."""

    def __init__(self, every: int = RECLAIM_EVERY) -> None:
        self.every = every
        self.ended = 0

    def note_ended(self) -> bool:
        """One more ended; returns whether memory was reclaimed now."""
        self.ended += 1
        if self.ended < self.every:
            return False
        self.ended = 0
        reclaim()
        return True
