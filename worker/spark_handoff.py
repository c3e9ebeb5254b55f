"""How a micro-batch reaches Spark and its result comes back (topology.spark.handoff).

`arrow` hands the Arrow table to `createDataFrame`, which works with every Spark but ships
the rows inside the job's tasks. `parquet` writes the table to a Parquet file that Spark's
vectorized reader scans, about a third faster per batch; it needs Spark to see the worker's
disk, so `auto` picks it for a local master, and for the supervisor's shared Spark Connect
server, which runs on this host. Tuples that fit no Arrow table go as rows. Results come
back as Arrow where PySpark can.
"""

from __future__ import annotations

import contextlib
import itertools
import shutil
from collections.abc import Callable, Iterator, Mapping, Sequence
from pathlib import Path
from typing import Any

import pyarrow as pa
import pyarrow.parquet as pq

from squall.components import Batch, Tuple, tuples_of
from squall.tables import TableError, concat, rows_table

_PLAIN_TYPES = {
    pa.string(): "string",
    pa.large_string(): "string",
    pa.int64(): "bigint",
    pa.int32(): "int",
    pa.float64(): "double",
    pa.bool_(): "boolean",
}


class Handoff:
    def __init__(self, conf: Mapping[str, Any], directory: Path, on_this_host: bool) -> None:
        """`directory`: where this worker's Parquet files go (None under the Arrow handoff
        after this); `on_this_host`: the Spark reads this host's disk whatever its master."""
        handoff = conf.get("topology.spark.handoff", "auto")
        remote = conf.get("spark.remote") or conf.get("topology.spark.connect.remote")
        local = not remote and conf.get("spark.master", "").startswith("local")
        self.directory: Path | None = None
        if handoff == "parquet" or (handoff == "auto" and (local or on_this_host)):
            self.directory = directory
        # files a killed predecessor on this slot left go now; this worker's go at `clear`
        shutil.rmtree(directory, ignore_errors=True)
        self._files = itertools.count()

    @contextlib.contextmanager
    def dataframe(
        self,
        session: Any,
        cores: Callable[[], int],
        fields: Sequence[str],
        items: Sequence[Tuple | Batch],
    ) -> Iterator[Any]:
        """The DataFrame of a micro-batch, valid until the block ends (its file is removed
        then: a bolt must not keep the DataFrame past process_batch). `cores`: the session's,
        asked only when a Parquet file is written."""
        try:
            table = table_of(fields, items)
        except TableError:
            rows = [list(t.values) for item in items for t in tuples_of(item)]
            yield session.createDataFrame(rows, schema=list(fields))
            return
        with self.frame(session, cores, table) as df:
            yield df

    @contextlib.contextmanager
    def frame(self, session: Any, cores: Callable[[], int], table: pa.Table) -> Iterator[Any]:
        """`table` as a DataFrame: read from its Parquet file, or Arrow in the plan."""
        path = self._write(table, cores)
        if path is None:
            yield session.createDataFrame(table)
            return
        try:
            yield _reader(session, table.schema).parquet(str(path))
        finally:
            path.unlink(missing_ok=True)

    def clear(self) -> None:
        if self.directory is not None:
            shutil.rmtree(self.directory, ignore_errors=True)

    def _write(self, table: pa.Table, cores: Callable[[], int]) -> Path | None:
        """The Parquet file of `table`, in row groups of a core each (Spark splits a Parquet
        scan by row group, no finer); None under the Arrow handoff or for a type Parquet
        cannot store."""
        if self.directory is None:
            return None
        self.directory.mkdir(parents=True, exist_ok=True)
        path = self.directory / f"batch-{next(self._files)}.parquet"
        groups = max(-(-table.num_rows // max(cores(), 1)), 1)
        try:
            pq.write_table(table, path, compression="none", row_group_size=groups)
        except pa.ArrowException:
            path.unlink(missing_ok=True)
            return None
        return path


def _reader(session: Any, schema: pa.Schema) -> Any:
    """A Parquet reader told the batch's schema when its types are plain ones, so Spark skips
    reading the file footer to infer it (a tenth of a second per micro-batch)."""
    types = [_PLAIN_TYPES.get(f.type) for f in schema]
    if None in types:
        return session.read
    ddl = ", ".join(f"`{f.name}` {t}" for f, t in zip(schema, types, strict=True))
    return session.read.schema(ddl)


def table_of(fields: Sequence[str], items: Sequence[Tuple | Batch]) -> pa.Table:
    """Every row of `items` as one table: batches as they arrived, single tuples gathered
    into one more table."""
    tables = [item.table for item in items if isinstance(item, Batch)]
    single = [item.values for item in items if isinstance(item, Tuple)]
    if single:
        tables.append(rows_table(fields, single))
    return concat(tables)


def result_table(df: Any) -> pa.Table:
    """A result DataFrame as an Arrow table, fetched as Arrow where PySpark can (4.0+)."""
    if hasattr(df, "toArrow"):
        return df.toArrow()
    return rows_table(df.columns, [tuple(row) for row in df.collect()])
