"""The topology bench/pertuple.py measures: words -> shuffle -> upper-case -> fields grouping on
the word -> count, Storm's classic shape with small tuples.

The settings come from $SQUALL_BENCH_PERTUPLE (JSON, read at submit and carried to the
workers as the spout's kwargs): `rate` (tuples per second, 0: as fast as the spout may),
`batch` (0: one tuple per emit; N: N rows per emit_batch, and the bolts work on whole
tables), `tracked` (emit with a message id, so that acking measures complete latency),
`par` (tasks of each bolt) and `spouts` (tasks of the spout, 1 unless given: with two
workers one spout task would be half of one worker's work and the ceiling of both), and
`counted_by` ("local_or_shuffle" instead of the word's fields grouping: nothing crosses
between workers, a ceiling, not a word count), and `work` (0: the middle bolt only
upper-cases; N: it also runs N rounds of a Python loop per tuple, the work cases' ~40 us
of bench/pertuple_squall.py: bolts whose work is real, which more workers should share).

The topology measures itself, because only its components see every tuple: the spout and
each counting task append a JSON line to <topology.output.dir>/<component>-<task>.jsonl
every half second with their wall-clock time and running totals, the spout with a sample of
complete latencies (emit to ack or fail, its own monotonic clock), the counter with a sample of
emit-to-count lags (the tuple's emit time on the wall clock: every process runs on this one
machine). Counting and sampling cost a few list appends per tuple; the files cost nothing
per tuple.
"""

from __future__ import annotations

import json
import os
import random
import string
import time
from collections import Counter
from typing import Any

from progress_log import ProgressLog, thinned

from squall import Bolt, Grouping, Spout, Topology

SETTINGS: dict[str, Any] = json.loads(os.environ.get("SQUALL_BENCH_PERTUPLE") or "{}")
VOCABULARY = 1000  # distinct words
STREAM_WORDS = 100_000  # the spout cycles through this many seeded draws (a multiple of 1000)
SEED = 16
MAX_BURST = 64  # emits one next_tuple call makes at most when the spout is throttled
CATCH_UP = 0.1  # seconds of emits a throttled spout that fell behind makes up at most


def vocabulary(seed: int = SEED, size: int = VOCABULARY) -> list[str]:
    """`size` distinct lower-case words of 3 to 9 letters, the same for every run."""
    rng = random.Random(seed)
    words: set[str] = set()
    while len(words) < size:
        words.add("".join(rng.choices(string.ascii_lowercase, k=rng.randint(3, 9))))
    return sorted(words)


def word_stream(seed: int = SEED, length: int = STREAM_WORDS) -> list[str]:
    """The words every system of the bench processes, in this order, cycled."""
    words = vocabulary(seed)
    rng = random.Random(seed + 1)
    return rng.choices(words, k=length)


def emits_due(due: float, now: float, step: float) -> tuple[int, float]:
    """How many emits are due at `now` when the next was due at `due` and they are `step`
    seconds apart (at least one: the caller waited for `due`), and when the next one is
    due after them; a backlog of more than CATCH_UP seconds is forgiven, and at most
    MAX_BURST go at once."""
    due = max(due, now - CATCH_UP)
    n = min(MAX_BURST, 1 + int((now - due) / step))
    return n, due + n * step


class WordSpout(Spout):
    outputs = ["word", "ts"]

    def initialize(self, conf, context):
        kw = self.kwargs
        self.rate = float(kw.get("rate") or 0)
        self.batch = int(kw.get("batch") or 0)
        self.tracked = bool(kw.get("tracked", True))
        self.words = word_stream()
        self.next = 0
        self.unit = self.batch or 1
        self.due = time.monotonic()
        self.emitted = self.acked = self.failed = 0
        self.pending: dict[int, tuple[float, int]] = {}
        self.seq = 0
        self.latencies: list[float] = []
        self.log = ProgressLog(context.output_dir, f"spout-{context.task_id}")
        if self.batch:
            import pyarrow as pa

            self.word_array = pa.array(self.words, pa.string())

    def _due(self) -> int:
        """How many emits are due at `rate` tuples per second, after waiting for the first.
        Emits go out in small bursts rather than one per sleep: a thread that sleeps
        for less than a millisecond wakes up to wait for the GIL (up to 5 ms in a busy
        worker), and a sleep per tuple would throttle far below `rate`."""
        now = time.monotonic()
        if self.due > now:
            time.sleep(self.due - now)
            now = time.monotonic()
        n, self.due = emits_due(self.due, now, self.unit / self.rate)
        return n

    def next_tuple(self):
        for _ in range(self._due() if self.rate else 1):
            self._emit_one()
        if self.log.due_now():
            self._write()
        return True

    def _emit_one(self) -> None:
        msg_id = None
        if self.tracked:
            self.seq += 1
            msg_id = self.seq
            self.pending[msg_id] = (time.perf_counter(), self.unit)
        if self.batch:
            self._emit_batch(msg_id)
        else:
            word = self.words[self.next]
            self.next = (self.next + 1) % len(self.words)
            self.emit([word, time.time()], msg_id=msg_id)
        self.emitted += self.unit

    def _emit_batch(self, msg_id: int | None) -> None:
        import pyarrow as pa

        rows = self.word_array.slice(self.next, self.batch)
        self.next = (self.next + self.batch) % len(self.words)
        ts = pa.repeat(pa.scalar(time.time(), pa.float64()), self.batch)
        self.emit_batch({"word": rows, "ts": ts}, msg_id=msg_id)

    def ack(self, msg_id):
        start, rows = self.pending.pop(msg_id, (None, 0))
        if start is not None:
            self.latencies.append((time.perf_counter() - start) * 1000)
            self.acked += rows
        if self.log.due_now():  # also while max.spout.pending holds next_tuple back
            self._write()

    def fail(self, msg_id):
        start, rows = self.pending.pop(msg_id, (None, 0))
        if start is not None:
            self.latencies.append((time.perf_counter() - start) * 1000)
            self.failed += rows

    def _write(self) -> None:
        self.log.write(
            {
                "emitted": self.emitted,
                "acked": self.acked,
                "failed": self.failed,
                "pending": len(self.pending),
                "latency_ms": thinned(self.latencies),
            }
        )
        self.latencies = []

    def cleanup(self):
        self._write()
        self.log.close()


class UpperBolt(Bolt):
    outputs = ["word", "ts"]

    def process(self, tup):
        word, ts = tup.values
        self.emit([word.upper(), ts])


def busy(seed: int, rounds: int) -> int:
    """Pure Python work of a known size: `rounds` steps of a small hash."""
    h = seed
    for i in range(rounds):
        h = (h * 31 + i) & 0xFFFFF
    return h


class WorkBolt(Bolt):
    """UpperBolt with real per-tuple work: `work` rounds of busy() before its emit.

    Every TIMED_EVERY-th busy() is timed in thread CPU time, and the totals written to its
    progress log: this machine's speed swings within seconds, in both workers at once
    (bench/RESULTS.md, "Scaling at equal speed"), so cases run a minute apart are compared at
    equal speed too (bench/pertuple.py's scaling lines). Timing one call in 64 keeps the
    clock reads off nearly every tuple."""

    outputs = ["word", "ts"]
    TIMED_EVERY = 64

    def initialize(self, conf, context):
        self.rounds = int(self.kwargs.get("work") or 0)
        self.seen = self.timed = 0
        self.busy_s = 0.0
        self.log = ProgressLog(context.output_dir, f"work-{context.task_id}")

    def process(self, tup):
        word, ts = tup.values
        self.seen += 1
        if self.seen % self.TIMED_EVERY:
            busy(len(word), self.rounds)
        else:
            began = time.thread_time()
            busy(len(word), self.rounds)
            self.busy_s += time.thread_time() - began
            self.timed += 1
            if self.log.due_now():
                self._write()
        self.emit([word.upper(), ts])

    def idle(self):
        if self.log.due_now():
            self._write()

    def _write(self) -> None:
        self.log.write({"timed": self.timed, "busy_s": self.busy_s})

    def cleanup(self):
        self._write()
        self.log.close()


class UpperTableBolt(Bolt):
    outputs = ["word", "ts"]

    def process_table(self, batch):
        import pyarrow.compute as pc

        table = batch.table
        self.emit_batch({"word": pc.utf8_upper(table.column("word")), "ts": table.column("ts")})


class CountBolt(Bolt):
    """Counts per word; every 64th tuple's emit-to-count lag is sampled."""

    outputs = ["word", "count"]

    def initialize(self, conf, context):
        self.counts: Counter[str] = Counter()
        self.counted = 0
        self.lags: list[float] = []
        self.log = ProgressLog(context.output_dir, f"count-{context.task_id}")

    def process(self, tup):
        word, ts = tup.values
        self.counts[word] += 1
        self.counted += 1
        if not self.counted & 63:
            self.lags.append((time.time() - ts) * 1000)
            if self.log.due_now():
                self._write()

    def idle(self):
        if self.log.due_now():
            self._write()

    def _write(self) -> None:
        self.log.write({"counted": self.counted, "lag_ms": thinned(self.lags)})
        self.lags = []

    def cleanup(self):
        self._write()
        self.log.close()


class CountTableBolt(CountBolt):
    """Counts per word from whole tables; one lag sample per table (its oldest row)."""

    def process_table(self, batch):
        import pyarrow.compute as pc

        table = batch.table
        counts = pc.value_counts(table.column("word"))
        words, numbers = counts.field("values").to_pylist(), counts.field("counts").to_pylist()
        self.counts.update(dict(zip(words, numbers, strict=True)))
        self.counted += table.num_rows
        self.lags.append((time.time() - pc.min(table.column("ts")).as_py()) * 1000)
        if self.log.due_now():
            self._write()


_BATCH = int(SETTINGS.get("batch") or 0)
_PAR = int(SETTINGS.get("par") or 2)
_SPOUTS = int(SETTINGS.get("spouts") or 1)
_WORK = int(SETTINGS.get("work") or 0)
# how the counter takes its words: by the word (a word count), or local_or_shuffle (each
# worker keeps its tuples: bench/pertuple_squall.py's ceiling case)
_COUNTED_BY = (
    Grouping.local_or_shuffle
    if SETTINGS.get("counted_by") == "local_or_shuffle"
    else Grouping.fields("word")
)


class PerTuple(Topology):
    name = "pertuple"

    words = WordSpout.spec(
        par=_SPOUTS,
        rate=SETTINGS.get("rate", 0),
        batch=_BATCH,
        tracked=SETTINGS.get("tracked", True),
    )
    upper = (
        UpperTableBolt.spec(inputs={words: Grouping.shuffle}, par=_PAR)
        if _BATCH
        else WorkBolt.spec(inputs={words: Grouping.shuffle}, par=_PAR, work=_WORK)
        if _WORK
        else UpperBolt.spec(inputs={words: Grouping.shuffle}, par=_PAR)
    )
    count = (CountTableBolt if _BATCH else CountBolt).spec(inputs={upper: _COUNTED_BY}, par=_PAR)
