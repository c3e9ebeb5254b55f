"""The progress lines the components of bench/pertuple_topology.py write and bench/pertuple.py
reads: a JSON line per half second per task with its wall-clock time, running totals and a
sample of latencies. A line per interval, not per tuple, costs the measured topology nothing
per tuple; the sample is strided, so its percentiles are those of all the latencies."""

from __future__ import annotations

import json
import time
from pathlib import Path
from typing import Any

LOG_INTERVAL = 0.5  # seconds between two progress lines
SAMPLES_PER_LINE = 500  # latency samples kept per progress line at most


class ProgressLog:
    """A JSON line per LOG_INTERVAL in a file of the topology's output directory."""

    def __init__(self, directory: str, name: str) -> None:
        path = Path(directory)
        path.mkdir(parents=True, exist_ok=True)
        self.file = (path / f"{name}.jsonl").open("a")
        self.due = time.monotonic() + LOG_INTERVAL

    def due_now(self) -> bool:
        return time.monotonic() >= self.due

    def write(self, record: dict[str, Any]) -> None:
        self.due = time.monotonic() + LOG_INTERVAL
        self.file.write(json.dumps({"t": time.time(), **record}) + "\n")
        self.file.flush()

    def close(self) -> None:
        self.file.close()


def thinned(samples: list[float]) -> list[float]:
    """At most SAMPLES_PER_LINE of `samples`, evenly strided (percentiles stay unbiased)."""
    stride = max(1, -(-len(samples) // SAMPLES_PER_LINE))
    return [round(s, 3) for s in samples[::stride]]


def read_progress(directory: Path, component: str) -> list[dict[str, Any]]:
    """Every progress line `component`'s tasks wrote in `directory`, each with "file" (its
    task's file name), in time order per task; a half-written last line is left out."""
    records = []
    for path in sorted(Path(directory).glob(f"{component}-*.jsonl")):
        for line in path.read_text().splitlines():
            try:
                records.append({**json.loads(line), "file": path.name})
            except ValueError:
                continue
    return records
