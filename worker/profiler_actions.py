"""The worker's shell for Storm's profiling requests: watches /profilerconfig/<topology-id>
(nimbus stores requests there: nimbus/rpc/profiler_calls.py), takes the ones naming this worker
(squall.profile_requests.for_worker) and carries them out as Storm's supervisor does, writing
what they produce next to the worker's log (worker-<id>-<port>-<action>-<ms>.txt):

- JPROFILE_STOP due later: profiling runs (worker/sampling_profiler.py) until it is due, then
  stops and dumps; due now or past: stop and dump now. JPROFILE_START: start; JPROFILE_DUMP:
  dump what the running profiler saw.
- JSTACK_DUMP: every thread's stack. JMAP_DUMP: the heap by object type.
- JVM_RESTART: the worker exits and its supervisor starts it again.

A request is deleted before it is carried out (its node's version checked, so a newer one
for the same action stays), so a restart never repeats itself; a JPROFILE_STOP is deleted
when it is due. Actions run on a thread of their own, one at a time, never on ZooKeeper's
event thread (a heap summary of a large worker takes a while; assignments must not wait).
"""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

from kazoo.client import KazooClient
from kazoo.exceptions import BadVersionError, KazooException, NoNodeError

from squall import profile_requests as pr

from . import sampling_profiler as sp

log = logging.getLogger("squall.worker")


class ProfilerActions:
    def __init__(
        self,
        zk: KazooClient,
        directory: str,
        hosts: set[str],
        port: int,
        out_prefix: Path,
        restart: Callable[[], None],
        wall_ms: Callable[[], int] = lambda: int(time.time() * 1000),
    ) -> None:
        self.zk = zk
        self.directory = directory
        self.hosts = hosts
        self.port = port
        self.out_prefix = out_prefix  # <log dir>/worker-<topology-id>-<port>
        self.restart = restart
        self.wall_ms = wall_ms
        self.profiler = sp.SamplingProfiler()
        self.pool = ThreadPoolExecutor(1, thread_name_prefix="profiler-actions")
        self.lock = threading.Lock()
        self.timer: threading.Timer | None = None
        self.watching = False
        self.closed = False

    @classmethod
    def of_worker(cls, worker: Any, conf: dict[str, Any], tid: str, host: str) -> ProfilerActions:
        """A worker's: known by its host and supervisor id on its port, writing beside its log
        (the supervisor's <storm.local.dir>/supervisor/logs), restarting by its `_restart`."""
        node, port = worker.slot
        logs = Path(conf["storm.local.dir"]).resolve() / "supervisor" / "logs"
        directory = worker.layout.profilerconfig(tid)
        prefix = logs / f"worker-{tid}-{port}"
        return cls(worker.zk, directory, {host, node}, port, prefix, worker._restart)

    def start(self) -> None:
        # the directory appears with the topology's first request: watch for it, then its children
        self.zk.DataWatch(self.directory)(self._directory_changed)

    def _directory_changed(self, _data: Any, stat: Any, _event: Any = None) -> bool | None:
        if self.closed:
            return False
        if stat is not None and not self.watching:
            self.watching = True
            self.zk.ChildrenWatch(self.directory)(self._children_changed)
            return False
        return None

    def _children_changed(self, children: list[str]) -> bool | None:
        if self.closed:
            return False
        try:
            self.check(children)
        except Exception:  # noqa: BLE001 - a failed action never takes the worker down
            log.exception("profiling requests")
        return None

    def check(self, children: list[str]) -> None:
        now = self.wall_ms()
        stored = {}
        for child in children:
            path = f"{self.directory}/{child}"
            try:
                data, stat = self.zk.get(path)
                stored[pr.decode(data, path)] = (path, stat.version)
            except NoNodeError:
                continue
            except pr.ProfileRequestError as exc:
                log.warning("ignoring %s", exc)
        for request in pr.for_worker(stored, self.hosts, self.port, now):
            path, version = stored[request]
            if request.action == pr.STOP and request.time_stamp_ms > now:
                self._profile_until(request, path, version, now)
            elif self._take(path, version):
                self.pool.submit(self._act, request)

    def _take(self, path: str, version: int) -> bool:
        try:
            self.zk.delete(path, version=version)
            return True
        except (NoNodeError, BadVersionError):
            return False  # done by another look, or replaced by a newer request
        except KazooException as exc:
            log.warning("cannot take %s: %s", path, exc)
            return False

    def _profile_until(self, request: pr.ProfileRequest, path: str, version: int, now: int) -> None:
        with self.lock:
            if not self.profiler.running:
                self.profiler.start()
                log.info("profiling every thread until %d (%s)", request.time_stamp_ms, path)
            if self.timer is not None:
                self.timer.cancel()
            self.timer = threading.Timer(
                (request.time_stamp_ms - now) / 1000, self._due, (request, path, version)
            )
            self.timer.daemon = True
            self.timer.start()

    def _due(self, request: pr.ProfileRequest, path: str, version: int) -> None:
        if self._take(path, version):
            self._act(request)

    def _act(self, request: pr.ProfileRequest) -> None:
        try:
            self._carry_out(request)
        except Exception:  # noqa: BLE001 - a failed action never takes the worker down
            log.exception("profiling action %s", request.action)

    def _carry_out(self, request: pr.ProfileRequest) -> None:
        action = request.action
        log.info("profiling action %s (requested for %d)", action, request.time_stamp_ms)
        if action == "JVM_RESTART":
            self.restart()
        elif action == "JSTACK_DUMP":
            self._write("jstack", sp.thread_dump())
        elif action == "JMAP_DUMP":
            self._write("heap", sp.heap_summary())
        elif action == "JPROFILE_START":
            self.profiler.start()
        elif action == "JPROFILE_DUMP":
            self._write("profile", self.profiler.dump())
        elif action == pr.STOP and self.profiler.running:
            self._write("profile", self.profiler.stop())

    def _write(self, kind: str, text: str) -> None:
        path = Path(f"{self.out_prefix}-{kind}-{self.wall_ms()}.txt")
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text)
        log.info("wrote %s", path)

    def close(self) -> None:
        self.closed = True
        self.pool.shutdown(wait=False, cancel_futures=True)
        with self.lock:
            if self.timer is not None:
                self.timer.cancel()
        if self.profiler.running:
            self.profiler.stop()
