"""File sinks whose output survives a worker killed with SIGKILL.

Single tuples go to a JSON-lines file, one line each, and batches to an Arrow IPC stream
file, one record batch each; both are appended to and handed to the operating system before
the input is acked, so no acked output is lost. A task (each start of it) has one file of
each kind, not one per batch. A reader stops at a torn last line or record batch: it was
never acked, and its input was replayed.

FileSink keeps every row it is given: under at-least-once delivery a replayed tuple is
there twice. IdempotentFileSink keeps one row per key (`key_fields`), so a replay rewrites
its key instead of adding to it. For that to make results exact, each key's value must be
computed from one copy of its input: a replayed tuple and its slow original can meet in the
same micro-batch, so a SparkBolt tells them apart by input identity before aggregating
(examples/exact_wordcount.py shows a cheap way for batches).
"""

from __future__ import annotations

import itertools
import json
import time
from pathlib import Path
from typing import IO, Any

import pyarrow as pa
import pyarrow.ipc as ipc

from squall.components import Batch, Bolt, TaskContext, Tuple

_KEYS = b"squall.key_fields"


class FileSink(Bolt):
    key_fields: tuple[str, ...] | list[str] = ()

    def initialize(self, conf: dict[str, Any], context: TaskContext) -> None:
        self.directory = Path(context.output_dir)
        self.directory.mkdir(parents=True, exist_ok=True)
        # a restarted task must not append to its predecessor's (maybe torn) stream
        self.prefix = f"{context.component_id}-{context.task_id}-{time.time_ns()}"
        self.streams = itertools.count()
        self.writer: ipc.RecordBatchStreamWriter | None = None  # opened for the first batch
        self.sink: pa.NativeFile | None = None
        self.schema: pa.Schema | None = None
        self.lines = self.directory / f"{context.component_id}-{context.task_id}.jsonl"
        self.file: IO[str] | None = None  # opened for the first single tuple

    def process(self, tup: Tuple) -> None:
        row = dict(zip(tup.fields, tup.values, strict=True))
        record = {"fields": list(self.key_fields), "row": row}
        if self.file is None:
            self.file = self._open_lines()
        self.file.write(json.dumps(record, sort_keys=True) + "\n")
        self.file.flush()

    def _open_lines(self) -> IO[str]:
        file = self.lines.open("a+", encoding="utf-8")
        file.seek(0, 2)
        if file.tell():  # a killed predecessor may have left half a line
            file.seek(file.tell() - 1)
            if file.read(1) != "\n":
                file.write("\n")
        return file

    def process_table(self, batch: Batch) -> None:
        missing = set(self.key_fields) - set(batch.fields)
        if missing:
            raise ValueError(f"key fields {sorted(missing)} are not among {list(batch.fields)}")
        table = batch.table.replace_schema_metadata({_KEYS: json.dumps(list(self.key_fields))})
        if self.writer is None or table.schema != self.schema:
            self._close_stream()  # a stream holds one schema: other types start another
            path = self.directory / f"{self.prefix}-{next(self.streams):04d}.arrows"
            self.sink = pa.OSFile(str(path), "wb")  # unbuffered: each write reaches the OS
            self.writer = ipc.new_stream(self.sink, table.schema)
            self.schema = table.schema
        self.writer.write_table(table)

    def _close_stream(self) -> None:
        if self.writer is not None and self.sink is not None:
            self.writer.close()
            self.sink.close()
        self.writer = self.sink = None

    def cleanup(self) -> None:
        self._close_stream()
        if self.file is not None:
            self.file.close()

    @staticmethod
    def table(directory: str | Path, component: str) -> pa.Table:
        """Every task's output as one table: for an IdempotentFileSink one row per key (rows
        of one key written more than once are copies of one value; the last is kept)."""
        return _load(Path(directory), component)[0]


class IdempotentFileSink(FileSink):
    def __init__(self, key_fields: list[str], **kwargs: Any) -> None:
        super().__init__(key_fields=key_fields, **kwargs)
        if not key_fields:
            raise ValueError("IdempotentFileSink needs key_fields")
        self.key_fields = list(key_fields)

    @staticmethod
    def read(directory: str | Path, component: str) -> dict[tuple, dict[str, Any]]:
        """The output as a dict from key (values in key_fields order) to row."""
        table, keys = _load(Path(directory), component)
        return {tuple(row[k] for k in keys): row for row in table.to_pylist()}


def _load(directory: Path, component: str) -> tuple[pa.Table, list[str]]:
    tables, keys = [], []
    for path in sorted(directory.glob(f"{component}-*.arrows")):
        schema, batches = _read_stream(path)
        if schema is not None:
            keys = json.loads(schema.metadata[_KEYS])
            tables.append(pa.Table.from_batches(batches, schema).replace_schema_metadata(None))
    rows = []
    for path in sorted(directory.glob(f"{component}-*.jsonl")):
        for line in path.read_text(encoding="utf-8").splitlines():
            try:
                record = json.loads(line)
            except ValueError:
                continue  # a torn line, never acked: its tuple was replayed
            keys = record["fields"]
            rows.append(record["row"])
    if rows:
        tables.append(pa.Table.from_pylist(rows))
    if not tables:
        return pa.table({}), keys
    table = pa.concat_tables(tables, promote_options="permissive")
    if not keys:
        return table, keys
    values = [c for c in table.column_names if c not in keys]
    grouped = table.group_by(keys, use_threads=False)
    if not values:
        return grouped.aggregate([]), keys
    last = grouped.aggregate([(c, "last") for c in values])
    # name the aggregates back by name: pyarrow before 15 put them before the keys
    names = [n if n in keys else n.removesuffix("_last") for n in last.column_names]
    return last.rename_columns(names).select(table.column_names), keys


def _read_stream(path: Path) -> tuple[pa.Schema | None, list[pa.RecordBatch]]:
    """The whole record batches of a stream file, up to a torn one at its end."""
    batches: list[pa.RecordBatch] = []
    with pa.memory_map(str(path)) as source:
        try:
            reader = ipc.open_stream(source)
        except (pa.ArrowInvalid, OSError):
            return None, batches  # killed before its schema was written
        while True:
            try:
                batches.append(reader.read_next_batch())
            except StopIteration:
                break
            except (pa.ArrowInvalid, OSError):
                break  # a torn last batch, never acked
        return reader.schema, batches
