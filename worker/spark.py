"""The worker's one SparkSession, started on first use (only workers running a SparkBolt pay
for a JVM). `spark.master` comes from the topology conf: local[*] by default, any Spark
cluster URL works, and `spark.remote` selects a Spark Connect endpoint."""

from __future__ import annotations

import os
import sys
import threading
from typing import Any

_NOT_FORWARDED = {"spark.master", "spark.remote"}


class SparkHolder:
    def __init__(self, conf: dict[str, Any], app_name: str) -> None:
        self.conf = conf
        self.app_name = app_name
        self._session: Any = None
        self._lock = threading.Lock()

    def session(self) -> Any:
        with self._lock:
            if self._session is None:
                os.environ.setdefault("PYSPARK_PYTHON", sys.executable)
                from pyspark.sql import SparkSession

                builder = SparkSession.builder.appName(self.app_name)
                if self.conf.get("spark.remote"):
                    builder = builder.remote(self.conf["spark.remote"])
                else:
                    builder = builder.master(self.conf.get("spark.master", "local[*]"))
                    builder = builder.config("spark.ui.enabled", "false")
                    builder = builder.config("spark.ui.showConsoleProgress", "false")
                for key, value in self.conf.items():
                    if key.startswith("spark.") and key not in _NOT_FORWARDED:
                        builder = builder.config(key, str(value))
                self._session = builder.getOrCreate()
            return self._session

    def stop(self) -> None:
        with self._lock:
            if self._session is not None:
                self._session.stop()
                self._session = None
