"""IdempotentFileSink on a real directory: one row per key whichever way rows arrived (single
tuples as JSON lines, batches as Arrow files), replays rewrite instead of adding, and a half
written file is never read."""

import pyarrow as pa
import pytest

from squall.components import Batch, TaskContext, Tuple
from squall.sinks import FileSink, IdempotentFileSink

FIELDS = ("batch", "word", "count")


def sink(tmp_path, task=1):
    s = IdempotentFileSink(key_fields=["batch", "word"])
    s.initialize({}, TaskContext("t", "sink", task, (1, 2), str(tmp_path)))
    return s


def batch(rows):
    table = pa.table({f: [r[i] for r in rows] for i, f in enumerate(FIELDS)})
    return Batch("count", 3, "default", FIELDS, table)


def test_batches_and_tuples_are_read_back_one_row_per_key(tmp_path):
    a, b = sink(tmp_path, 1), sink(tmp_path, 2)
    a.process_table(batch([(1, "x", 2), (1, "y", 1)]))
    b.process_table(batch([(2, "x", 5)]))
    a.process_table(batch([(1, "x", 2)]))  # a replay of a key already written
    b.process(Tuple("count", 3, "default", FIELDS, (3, "z", 7)))
    b.process(Tuple("count", 3, "default", FIELDS, (3, "z", 7)))
    for s in (a, b):
        s.cleanup()
    rows = IdempotentFileSink.read(tmp_path, "sink")
    assert rows == {
        (1, "x"): {"batch": 1, "word": "x", "count": 2},
        (1, "y"): {"batch": 1, "word": "y", "count": 1},
        (2, "x"): {"batch": 2, "word": "x", "count": 5},
        (3, "z"): {"batch": 3, "word": "z", "count": 7},
    }
    table = IdempotentFileSink.table(tmp_path, "sink")
    assert table.column_names == list(FIELDS) and table.num_rows == 4


def test_batches_share_one_stream_file_and_a_torn_last_batch_is_ignored(tmp_path):
    s = sink(tmp_path)
    s.process_table(batch([(1, "x", 2)]))
    s.process_table(batch([(2, "y", 3)]))
    [stream] = list(tmp_path.glob("sink-1-*.arrows"))
    assert not list(tmp_path.glob("*.jsonl"))
    whole = stream.read_bytes()
    s.process_table(batch([(3, "z", 4)]))  # a worker killed while writing this one
    stream.write_bytes(stream.read_bytes()[: len(whole) + 40])
    assert IdempotentFileSink.read(tmp_path, "sink") == {
        (1, "x"): {"batch": 1, "word": "x", "count": 2},
        (2, "y"): {"batch": 2, "word": "y", "count": 3},
    }
    (tmp_path / "sink-2-0-0000.arrows").write_bytes(b"")  # killed before its schema
    assert len(IdempotentFileSink.read(tmp_path, "sink")) == 2
    assert IdempotentFileSink.read(tmp_path / "nothing", "sink") == {}


def test_a_batch_of_other_types_starts_another_stream(tmp_path):
    s = sink(tmp_path)
    s.process_table(batch([(1, "x", 2)]))
    table = pa.table({"batch": [9], "word": ["y"], "count": [1.5]})
    s.process_table(Batch("count", 3, "default", FIELDS, table))
    s.cleanup()
    assert len(list(tmp_path.glob("sink-1-*.arrows"))) == 2
    assert len(IdempotentFileSink.read(tmp_path, "sink")) == 2


def test_a_batch_without_the_key_fields_is_refused(tmp_path):
    s = sink(tmp_path)
    table = pa.table({"word": ["x"], "count": [1]})
    with pytest.raises(ValueError, match="batch"):
        s.process_table(Batch("count", 3, "default", ("word", "count"), table))
    assert not list(tmp_path.glob("*.arrows"))


def test_a_restarted_task_keeps_what_its_predecessor_wrote(tmp_path):
    first = sink(tmp_path)
    first.process_table(batch([(1, "x", 2)]))
    first.process(Tuple("count", 3, "default", FIELDS, (2, "y", 1)))
    first.file.write('{"fields": ["batch", "word"], "key": [9')  # killed mid-line
    first.file.flush()
    second = sink(tmp_path)  # same task id, new process
    second.process_table(batch([(3, "z", 4)]))
    second.process(Tuple("count", 3, "default", FIELDS, (4, "w", 1)))
    second.cleanup()
    assert sorted(IdempotentFileSink.read(tmp_path, "sink")) == [
        (1, "x"),
        (2, "y"),
        (3, "z"),
        (4, "w"),
    ]


def test_a_file_sink_without_keys_keeps_every_row(tmp_path):
    s = FileSink()
    s.initialize({}, TaskContext("t", "out", 1, (1,), str(tmp_path)))
    s.process_table(batch([(1, "x", 2)]))
    s.process_table(batch([(1, "x", 2)]))
    s.process(Tuple("count", 3, "default", FIELDS, (1, "x", 2)))
    s.cleanup()
    assert FileSink.table(tmp_path, "out").column("count").to_pylist() == [2, 2, 2]
    with pytest.raises(ValueError, match="key_fields"):
        IdempotentFileSink(key_fields=[])
