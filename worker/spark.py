"""The worker's one SparkSession, started on first use (only workers running a SparkBolt pay
for a JVM). `spark.master` comes from the topology conf: local[*] by default, any Spark
cluster URL works, and `spark.remote` selects a Spark Connect endpoint."""

from __future__ import annotations

import os
import sys
import threading
from typing import Any

import pyarrow as pa

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
                session = builder.getOrCreate()
                # The first job pays for class loading and code generation; pay it here,
                # before the task reports ready, not on the first batch of real tuples.
                warm = session.createDataFrame(pa.table({"x": [1, 2, 2]}))
                warm.groupBy("x").count().collect()
                self._session = session
            return self._session

    def stop(self) -> None:
        with self._lock:
            if self._session is not None:
                self._session.stop()
                self._session = None


def to_dataframe(session: Any, fields: list[str], rows: list[tuple]) -> Any:
    """A DataFrame of `rows`, handed to Spark as one Arrow table (no Python row pickling);
    columns Arrow cannot type go through Spark's own inference instead."""
    try:
        table = pa.table({f: [row[i] for row in rows] for i, f in enumerate(fields)})
    except (pa.ArrowInvalid, pa.ArrowTypeError, pa.ArrowNotImplementedError, OverflowError):
        return session.createDataFrame([list(r) for r in rows], schema=fields)
    return session.createDataFrame(table)


def result_rows(df: Any) -> list[list[Any]]:
    """The rows of a result DataFrame, fetched as Arrow where PySpark can."""
    if hasattr(df, "toArrow"):
        table = df.toArrow()
        columns = [table.column(i).to_pylist() for i in range(table.num_columns)]
        return [list(row) for row in zip(*columns, strict=True)]
    return [list(row) for row in df.collect()]
