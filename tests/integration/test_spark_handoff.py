"""A SparkBolt's micro-batch reaches a real local Spark whole, either way it is handed over:
batches and single tuples together, odd values through Spark's own inference, and no
Parquet file left behind."""

from __future__ import annotations

import pyarrow as pa
import pytest

from squall.components import Batch, Tuple
from squall.worker.spark import SparkHolder
from squall.worker.spark_handoff import result_table

FIELDS = ("word", "n")
CONF = {"spark.master": "local[1]", "spark.sql.shuffle.partitions": 1}


@pytest.fixture(scope="module")
def holders(tmp_path_factory):
    made = {
        handoff: SparkHolder(
            {**CONF, "topology.spark.handoff": handoff},
            "squall-test-handoff",
            tmp_path_factory.mktemp(handoff) / "handoff",
        )
        for handoff in ("parquet", "arrow")
    }
    try:
        yield made
    finally:
        for holder in made.values():
            holder.stop()


def items():
    table = pa.table({"word": ["a", "b", "a"], "n": [1, 2, 3]})
    return [
        Batch("src", 1, "default", FIELDS, table),
        Tuple("src", 2, "default", FIELDS, ("c", 4)),
        Batch("src", 1, "default", FIELDS, pa.table({"word": ["b"], "n": [5]})),
    ]


@pytest.mark.parametrize("handoff", ["parquet", "arrow"])
def test_every_row_reaches_spark(holders, handoff):
    holder = holders[handoff]
    assert (holder.handoff.directory is None) == (handoff == "arrow")
    with holder.dataframe(FIELDS, items()) as df:
        summed = result_table(df.groupBy("word").sum("n").orderBy("word"))
        if holder.handoff.directory is not None:
            assert len(list(holder.handoff.directory.iterdir())) == 1
    assert summed.to_pylist() == [
        {"word": "a", "sum(n)": 4},
        {"word": "b", "sum(n)": 7},
        {"word": "c", "sum(n)": 4},
    ]
    if holder.handoff.directory is not None:
        assert list(holder.handoff.directory.iterdir()) == []  # the batch's file is gone


def test_rows_arrow_cannot_type_go_through_spark_inference(holders):
    mixed = [
        Tuple("src", 2, "default", FIELDS, ("x", 1)),
        Tuple("src", 2, "default", FIELDS, ("y", "not a number")),
    ]
    with holders["parquet"].dataframe(FIELDS, mixed) as df:
        assert sorted(r["word"] for r in df.collect()) == ["x", "y"]
