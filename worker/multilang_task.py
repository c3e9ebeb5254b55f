"""One shell component task's conversation with its subprocess (Storm's ShellBolt and
ShellSpout share it): one exchange at a time, the task's call or a heartbeat; what the
subprocess says is carried out as it comes; a subprocess that breaks the protocol, dies or
stops answering is stopped and started again, and the exchange raises the cause, so it
reaches the topology's errors through the component's call.

The rules of each exchange are worker/multilang_protocol's `*_step` functions; the pipes are
worker/multilang_process's. This module joins them and keeps the task's state: errors the
subprocess reported and not yet raised, its metrics, the time of the last answered exchange.
"""

from __future__ import annotations

import itertools
import logging
import threading
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from . import multilang_exchanges as X
from . import multilang_protocol as P
from .multilang_process import MultilangError, ShellProcess

log = logging.getLogger("squall.worker.multilang")
Step = Callable[[P.Event], "P.Event | X.Done"]
LEVELS = {
    "TRACE": logging.DEBUG,
    "DEBUG": logging.DEBUG,
    "INFO": logging.INFO,
    "WARN": logging.WARNING,
    "ERROR": logging.ERROR,
}


class ShellTask:
    def __init__(
        self,
        process: Callable[[], ShellProcess],
        handshake: tuple[dict[str, Any], dict[str, Any], Path],
        emit: Callable[[P.Emit], list[int]],
        what: str,
    ) -> None:
        self.new_process = process
        self.handshake = handshake  # conf, context, pid dir
        self.emit = emit  # an emit to the executor: the target tasks
        self.what = what  # "shell bolt split:3 ['python3', 'split.py']", for errors
        self.shell: ShellProcess | None = None
        self.lock = threading.RLock()
        self.reported: list[str] = []  # the subprocess's error messages, not yet raised
        self.metrics: dict[str, Any] = {}
        self.last_exchange = time.monotonic()
        self.beats = itertools.count(1)

    def start(self) -> None:
        shell = self.new_process()
        self.shell = shell
        try:
            shell.start(*self.handshake)
        except BaseException:
            shell.stop()
            self.shell = None
            raise
        self.last_exchange = time.monotonic()

    def stop(self) -> None:
        with self.lock:
            if self.shell is not None:
                self.shell.stop()
                self.shell = None

    def exchange(self, message: dict[str, Any], step: Step) -> X.Done:
        """Send `message`, carry out the answers until `step` says Done. An emit the
        executor refuses (an undeclared stream, a wrong arity) is raised once the exchange
        is over: the subprocess is mid-conversation until then."""
        with self.lock:
            refused: Exception | None = None
            try:
                if self.shell is None:
                    self.start()
                assert self.shell is not None
                self.shell.send(message)
                while not isinstance(outcome := step(self.shell.read()), X.Done):
                    refused = self._carry_out(outcome) or refused
            except (MultilangError, P.ProtocolError) as exc:
                pid = self.shell.pid if self.shell is not None else 0
                self._restart()
                raise MultilangError(
                    f"{self.what} (pid {pid}): {exc}; its subprocess was restarted"
                ) from exc
            self.last_exchange = time.monotonic()
            if refused is not None:
                raise refused
            return outcome

    def beat_if_quiet(self, quiet_secs: float) -> None:
        """Storm's heartbeat (a tuple on __heartbeat, answered by sync) when no exchange was
        answered for `quiet_secs` and none is under way: a subprocess that died or hangs
        while no tuples come is found and restarted, its cause kept as a reported error."""
        if time.monotonic() - self.last_exchange < quiet_secs:
            return
        if not self.lock.acquire(blocking=False):
            return
        try:
            self.exchange(P.heartbeat_tuple(f"heartbeat-{next(self.beats)}"), X.heartbeat_step)
        except (MultilangError, OSError) as exc:
            log.error("%s", exc)
            self.reported.append(str(exc))
        finally:
            self.lock.release()

    def take_reported(self) -> list[str]:
        with self.lock:
            reported, self.reported = self.reported, []
        return reported

    def _restart(self) -> None:
        if self.shell is not None:
            self.shell.stop(grace=0.2)  # broken: no need to wait long for it
            self.shell = None
        try:
            self.start()
        except (MultilangError, P.ProtocolError, OSError) as exc:
            log.error("%s: restarting failed (tried again on the next call): %s", self.what, exc)

    def _carry_out(self, event: P.Event | X.Done) -> Exception | None:
        match event:
            case P.Emit():
                targets: list[int] = []
                refused = None
                try:
                    targets = self.emit(event)
                except Exception as exc:  # noqa: BLE001 - the user's emit, raised later
                    refused = exc
                if event.need_task_ids and event.task is None:
                    assert self.shell is not None
                    self.shell.send(list(targets or []))
                return refused
            case P.Log(msg, level):
                log.log(LEVELS[level], "%s: %s", self.what, msg)
            case P.ReportError(msg):
                log.error("%s reported: %s", self.what, msg)
                self.reported.append(msg)
            case P.Metrics(name, params):
                self.metrics[name] = params
        return None
