"""The worker's shell for Storm's dynamic log levels: watches /logconfigs/<topology-id>,
sets Python logger levels to what squall.log_config.levels_at decides for now, and arms a
timer for the next reset time (Storm's LogConfigManager). Each logger's level before its
first change is remembered, so a removed entry or one without a reset level goes back to it.
"""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Callable
from typing import Any

from kazoo.client import KazooClient

from squall import log_config

log = logging.getLogger("squall.worker")


class LogLevels:
    def __init__(
        self,
        zk: KazooClient,
        path: str,
        wall_ms: Callable[[], int] = lambda: int(time.time() * 1000),
    ) -> None:
        self.zk = zk
        self.path = path
        self.wall_ms = wall_ms
        self.lock = threading.Lock()
        self.config: log_config.LogConfig = {}
        self.original: dict[str, int] = {}  # Python logger name -> level before any change
        self.timer: threading.Timer | None = None
        self.closed = False

    def start(self) -> None:
        self.zk.DataWatch(self.path)(self._changed)

    def _changed(self, data: bytes | None, _stat: Any, _event: Any = None) -> bool | None:
        if self.closed:
            return False
        try:
            config = log_config.decode(data, self.path)
        except log_config.LogConfigError as exc:
            log.warning("ignoring %s", exc)
            return None
        with self.lock:
            self.config = config
        self.apply()
        return None

    def apply(self) -> None:
        """Set every logger to its level for now; re-arm the timer for the next reset."""
        with self.lock:
            if self.closed:
                return
            now = self.wall_ms()
            for name in self.config:
                logger = log_config.python_logger(name)
                self.original.setdefault(logger, logging.getLogger(logger).level)
            wanted = log_config.levels_at(
                {log_config.python_logger(n): e for n, e in self.config.items()},
                now,
                self.original,
            )
            for logger, level in sorted(wanted.items()):
                if logging.getLogger(logger).level != level:
                    logging.getLogger(logger).setLevel(level)
                    shown = logger or log_config.ROOT
                    log.info("log level of %s is now %s", shown, logging.getLevelName(level))
            if self.timer is not None:
                self.timer.cancel()
                self.timer = None
            due = log_config.next_reset_ms(self.config, now)
            if due is not None:
                self.timer = threading.Timer((due - now) / 1000 + 0.01, self.apply)
                self.timer.daemon = True
                self.timer.start()

    def close(self) -> None:
        with self.lock:
            self.closed = True
            if self.timer is not None:
                self.timer.cancel()
