"""A fixed pool of daemon threads running blocking calls for an asyncio loop.

concurrent.futures' pool joins its threads at interpreter exit, so one handler call blocked
on the controller (up to 120 s) would keep a stopping or stepping-down nimbus alive that
long. Nimbus's calls hold nothing that must finish (the controller owns every write), so
these threads are daemons, as the threaded server's were.
"""

from __future__ import annotations

import asyncio
import contextlib
import queue
import threading
from collections.abc import Callable
from typing import Any


def _settle(future: asyncio.Future, ok: bool, value: Any) -> None:
    if future.cancelled():
        return
    if ok:
        future.set_result(value)
    else:
        future.set_exception(value)


class DaemonPool:
    def __init__(self, threads: int, name: str) -> None:
        self.jobs: queue.SimpleQueue = queue.SimpleQueue()
        self.threads = [
            threading.Thread(target=self._work, name=f"{name}-{i}", daemon=True)
            for i in range(threads)
        ]
        for thread in self.threads:
            thread.start()

    def run(self, loop: asyncio.AbstractEventLoop, fn: Callable[..., Any], *args: Any) -> Any:
        """Queue fn(*args) for a pool thread; returns a future of `loop` to await."""
        future = loop.create_future()
        self.jobs.put((loop, future, fn, args))
        return future

    def _work(self) -> None:
        while (job := self.jobs.get()) is not None:
            loop, future, fn, args = job
            try:
                ok, value = True, fn(*args)
            except BaseException as exc:  # noqa: BLE001 - handed to the awaiting coroutine
                ok, value = False, exc
            with contextlib.suppress(RuntimeError):  # the loop closed meanwhile
                loop.call_soon_threadsafe(_settle, future, ok, value)

    def shutdown(self) -> None:
        """Each thread ends after its current call; nobody waits for them."""
        for _ in self.threads:
            self.jobs.put(None)
