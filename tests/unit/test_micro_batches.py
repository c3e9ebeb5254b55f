"""A SparkBolt's micro-batches: size and timeout close them, and each closes into one Spark
job per (source component, stream), whose fields the job's DataFrame gets."""

import contextlib

import pyarrow as pa
import pytest

from squall import SparkBolt
from squall.components import Batch, TaskContext, Tuple
from squall.worker.acking import Tick
from squall.worker.bolt_executor import SparkBoltExecutor
from squall.worker.delivery import TupleDelivery
from squall.worker.micro_batches import Arrived, Flush, MicroBatcher, RunSparkJob
from tests.unit.recording_io import FLUSH_EACH, RecordingIO


def tup(source, stream="default", ids=None):
    return Tuple(source, 1, stream, ("x",), (source,), ids or {})


def table(source, n, stream="default"):
    return Batch(source, 1, stream, ("x",), pa.table({"x": list(range(n))}))


def test_a_micro_batch_closes_when_it_holds_batch_size_rows():
    m = MicroBatcher(size=3, timeout=1)
    one, two = tup("a"), table("a", 2)
    assert m.handle(Arrived(one, now=0)) == []
    [job] = m.handle(Arrived(two, now=0.1))
    assert job == RunSparkJob("a", "default", (one, two)) and job.rows == 3
    assert m.handle(Flush()) == []  # nothing left


def test_a_micro_batch_closes_at_its_deadline_counted_from_the_first_arrival():
    m = MicroBatcher(size=100, timeout=1)
    assert m.handle(Tick(5)) == []  # nothing gathered: no deadline
    assert m.wait(now=5, idle=0.2) == 0.2
    first, second = tup("a"), tup("a")
    m.handle(Arrived(first, now=10))
    assert m.wait(now=10.25, idle=0.2) == 0.75
    assert m.handle(Arrived(second, now=10.5)) == []
    assert m.handle(Tick(10.99)) == []
    assert m.handle(Tick(11)) == [RunSparkJob("a", "default", (first, second))]
    assert m.wait(now=11, idle=0.2) == 0.2 and m.handle(Tick(30)) == []


def test_an_arrival_past_the_deadline_closes_the_micro_batch():
    m = MicroBatcher(size=100, timeout=1)
    first, late = tup("a"), tup("a")
    m.handle(Arrived(first, now=0))
    assert m.handle(Arrived(late, now=1)) == [RunSparkJob("a", "default", (first, late))]


def test_inputs_are_grouped_per_source_component_and_stream_in_sorted_order():
    m = MicroBatcher(size=5, timeout=1)
    items = [tup("b"), tup("a", "s1"), tup("a"), tup("a", "s1"), tup("b", "s1")]
    jobs = []
    for item in items:
        jobs += m.handle(Arrived(item, now=0))
    assert jobs == [
        RunSparkJob("a", "default", (items[2],)),
        RunSparkJob("a", "s1", (items[1], items[3])),
        RunSparkJob("b", "default", (items[0],)),
        RunSparkJob("b", "s1", (items[4],)),
    ]


def test_flush_runs_what_was_gathered():
    m = MicroBatcher(size=5, timeout=1)
    item = tup("a")
    m.handle(Arrived(item, now=0))
    assert m.handle(Flush()) == [RunSparkJob("a", "default", (item,))]
    assert m.handle(Flush()) == []


def test_an_unknown_event_raises():
    with pytest.raises(TypeError):
        MicroBatcher(1, 1).handle(object())


class FakeSpark:
    """Stands in for SparkHolder: the 'DataFrame' is the fields and the rows."""

    def __init__(self, alive=True):
        self.is_alive = alive
        self.lost = None  # SparkHolder says why its Spark is gone when it knows

    def session(self):
        return None

    def alive(self):
        return self.is_alive

    @contextlib.contextmanager
    def dataframe(self, fields, items):
        yield fields, [t.values for t in items]


class Recorder(SparkBolt):
    outputs = ["n"]

    def __init__(self):
        super().__init__()
        self.jobs = []

    def process_batch(self, df):
        self.jobs.append(df)
        if df[1][0] == ("boom",):
            raise ValueError("bad micro-batch")


def IO():  # noqa: N802 - reads as the class it was
    return RecordingIO()


def test_a_spark_bolt_runs_one_job_per_input_stream_with_its_fields_and_acks_each():
    io = IO()
    bolt = Recorder()
    conf = {
        "topology.message.timeout.secs": 30,
        "topology.batch.size": 10,
        "topology.batch.timeout.ms": 100,
    }
    fields = {("a", "default"): ("x",), ("a", "s1"): ("y", "z"), ("b", "default"): ("w",)}
    ex = SparkBoltExecutor(
        bolt,
        TaskContext("t", "count", 4, (4,), "/tmp"),
        {"default": ("n",)},
        conf,
        io,
        spark=FakeSpark(),
        input_fields=fields,
    )
    inputs = [
        Tuple("a", 1, "default", ("x",), ("p",), {100: 1}),
        Tuple("a", 1, "s1", ("y", "z"), ("boom",), {100: 2}),
        Tuple("b", 2, "default", ("w",), ("q",), {102: 3}),
        Tuple("a", 1, "default", ("x",), ("r",), {100: 4}),
    ]
    jobs = []
    for item in inputs:
        jobs += ex.batcher.handle(Arrived(item, now=0))
    jobs += ex.batcher.handle(Flush())
    ex.run_jobs(jobs)
    assert bolt.jobs == [
        (("x",), [("p",), ("r",)]),
        (("y", "z"), [("boom",)]),
        (("w",), [("q",)]),
    ]
    acks = [d for d in io.sent if isinstance(d, TupleDelivery)]
    assert [(d.stream, d.values) for d in acks] == [
        ("__ack_ack", (100, 1)),
        ("__ack_ack", (100, 4)),
        ("__ack_fail", (100,)),
        ("__ack_ack", (102, 3)),
    ]
    assert len(io.errors) == 1 and ex.stats.executed == 4
    # the heartbeat's micro-batch figures: three jobs, the failed one's row failed
    assert (ex.stats.spark.jobs, ex.stats.spark.rows) == (3, 4)
    assert (ex.stats.acked, ex.stats.failed) == (3, 1) and ex.stats.spark.job_ms >= 0
    assert ex.stats.process_ms >= ex.stats.execute_ms == ex.stats.spark.job_ms
    assert io.errors[0].startswith("ValueError: bad micro-batch\n") and ex.fatal is None


def test_a_failed_job_whose_spark_session_died_ends_the_task_as_fatal():
    io = IO()
    conf = {
        "topology.message.timeout.secs": 30,
        **FLUSH_EACH,  # its ack is flushed as it is made: the test reads it
        "topology.batch.size": 10,
        "topology.batch.timeout.ms": 100,
    }
    ex = SparkBoltExecutor(
        Recorder(),
        TaskContext("t", "count", 4, (4,), "/tmp"),
        {"default": ("n",)},
        conf,
        io,
        spark=FakeSpark(alive=False),
        input_fields={("a", "default"): ("x",)},
    )
    boom = Tuple("a", 1, "default", ("x",), ("boom",), {100: 2})
    ex.batcher.handle(Arrived(boom, now=0))
    assert ex.run_jobs(ex.batcher.handle(Flush())) is False
    assert ex.fatal is not None and "SparkSession stopped" in ex.fatal
    acks = [d for d in io.sent if isinstance(d, TupleDelivery)]
    assert [d.stream for d in acks] == ["__ack_fail"]  # its input is failed, to be replayed


def test_each_micro_batch_counts_its_rows_from_zero():
    m = MicroBatcher(size=2, timeout=10)
    m.handle(Arrived(tup("a"), now=0))
    assert len(m.handle(Arrived(tup("a"), now=0))) == 1
    assert m.handle(Arrived(tup("a"), now=1)) == []  # one row of two: still gathering
    [job] = m.handle(Arrived(tup("a"), now=1))
    assert job.rows == 2
