"""Sinks whose output stays exact under replays.

At-least-once delivery means a replayed tuple can reach a sink twice. IdempotentFileSink
writes every tuple as a JSON line keyed by `key_fields` and `read` keeps one record per key,
so a replay rewrites its key instead of adding to it. For that to make results exact, each
key's value must be computed from one copy of its input: a replayed tuple and its slow
original can meet in the same micro-batch, so a SparkBolt deduplicates its batch by input
identity (`df.dropDuplicates([...])`) before aggregating. A line is flushed to the operating
system before the tuple is acked, so a worker killed with SIGKILL loses no acked output.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from squall.components import Bolt, TaskContext, Tuple


class IdempotentFileSink(Bolt):
    def __init__(self, key_fields: list[str], **kwargs: Any) -> None:
        super().__init__(key_fields=key_fields, **kwargs)
        self.key_fields = list(key_fields)

    def initialize(self, conf: dict[str, Any], context: TaskContext) -> None:
        directory = Path(context.output_dir)
        directory.mkdir(parents=True, exist_ok=True)
        path = directory / f"{context.component_id}-{context.task_id}.jsonl"
        self.file = path.open("a+", encoding="utf-8")
        self.file.seek(0, 2)
        if self.file.tell():  # a killed predecessor may have left half a line
            self.file.seek(self.file.tell() - 1)
            if self.file.read(1) != "\n":
                self.file.write("\n")

    def process(self, tup: Tuple) -> None:
        row = dict(zip(tup.fields, tup.values, strict=True))
        key = [row[f] for f in self.key_fields]
        self.file.write(json.dumps({"key": key, "row": row}, sort_keys=True) + "\n")
        self.file.flush()

    def cleanup(self) -> None:
        self.file.close()

    @staticmethod
    def read(directory: str | Path, component: str) -> dict[tuple, dict[str, Any]]:
        """One row per key over every task's file (the last write of a key wins)."""
        rows: dict[tuple, dict[str, Any]] = {}
        for path in sorted(Path(directory).glob(f"{component}-*.jsonl")):
            for line in path.read_text(encoding="utf-8").splitlines():
                try:
                    record = json.loads(line)
                except ValueError:
                    continue  # a torn line, never acked: its tuple was replayed
                rows[tuple(record["key"])] = record["row"]
        return rows
