"""The user-facing Tuple: a NamedTuple underneath for speed, with the API of the frozen
dataclass it replaced; and the Tuple a worker builds for a delivery, by either path."""

import copy
import pickle

import pytest

from squall.components import Batch, TaskContext, Tuple
from squall.worker.bolt_executor import BoltExecutor
from squall.worker.delivery import TupleDelivery
from squall.worker.executors import inbox_item

from .test_executor_group import IO

FIELDS = ("word", "n")


def test_values_by_index_by_field_name_by_iteration_and_unpacking():
    t = Tuple("src", 3, "default", FIELDS, ("a", 1), {7: 8})
    assert (t[0], t[1], t[-1], t["word"], t["n"]) == ("a", 1, 1, "a", 1)
    assert list(t) == ["a", 1] and len(t) == 2
    word, n = t
    assert (word, n) == ("a", 1)
    assert (t.source_component, t.source_task, t.stream) == ("src", 3, "default")
    assert t.fields == FIELDS and t.values == ("a", 1) and t.ids == {7: 8}
    with pytest.raises(ValueError):
        t["missing"]
    with pytest.raises(IndexError):
        t[2]


def test_equality_and_hash_ignore_the_acking_ids_only():
    t = Tuple("src", 3, "default", FIELDS, ("a", 1), {7: 8})
    same = Tuple("src", 3, "default", FIELDS, ("a", 1))
    assert t == same and t.__ne__(same) is False and hash(t) == hash(same) and same.ids == {}
    for other in (
        Tuple("src", 4, "default", FIELDS, ("a", 1)),
        Tuple("src", 3, "other", FIELDS, ("a", 1)),
        Tuple("src", 3, "default", FIELDS, ("b", 1)),
        ("src", 3, "default", FIELDS, ("a", 1), {7: 8}),  # a plain tuple of the same parts
    ):
        assert t != other and t.__eq__(other) is False


def test_immutable_and_pickles_and_copies_whole():
    t = Tuple("src", 3, "default", FIELDS, ("a", 1), {7: 8})
    with pytest.raises(AttributeError):
        t.values = ("b", 2)  # type: ignore[misc]
    for back in (pickle.loads(pickle.dumps(t)), copy.copy(t), copy.deepcopy(t)):
        assert back == t and back.ids == {7: 8} and type(back) is Tuple
    assert "values=('a', 1)" in repr(t) and "ids" not in repr(t)


def test_a_batch_yields_tuples_with_its_ids():
    import pyarrow as pa

    batch = Batch("src", 3, "default", FIELDS, pa.table({"word": ["a", "b"], "n": [1, 2]}), {5: 6})
    got = list(batch.tuples())
    assert got == [Tuple("src", 3, "default", FIELDS, v) for v in (("a", 1), ("b", 2))]
    assert all(t.ids == {5: 6} for t in got)
    assert Batch.of(got[0]).table.to_pylist() == [{"word": "a", "n": 1}]


def test_the_inbound_fast_path_builds_the_tuple_inbox_item_builds():
    from squall import Bolt, Grouping, Spout, Topology
    from squall.worker.inbound import Inbound

    class S(Spout):
        outputs = list(FIELDS)

    class B(Bolt):
        outputs = ["x"]

    class T(Topology):
        s = S.spec()
        b = B.spec(inputs={s: Grouping.shuffle})

    context = TaskContext("t", "b", 1, (1,), "/tmp")
    conf = {"topology.message.timeout.secs": 30}
    executor = BoltExecutor(B(), context, {"default": ("x",)}, conf, IO())
    inbound = Inbound(T.structure(), {1: executor})
    sent = [
        TupleDelivery(1, "s", 2, "default", ("a", 1), (10, 11), (12, 13)),  # first: looked up
        TupleDelivery(1, "s", 2, "default", ("b", 2), (10,), (14,)),  # then: the fast path
        TupleDelivery(1, "s", 2, "default", ("c", 3)),
        TupleDelivery(9, "s", 2, "default", ("d", 4)),  # not this worker's task: dropped
        TupleDelivery(1, "s", 2, "nope", ("e", 5)),  # unknown stream: dropped
    ]
    inbound.deliver_many(sent)
    inbound.deliver_many(sent[:3])
    want = [inbox_item(d, FIELDS) for d in sent[:3]]
    taken = executor.inbox.take(100, 0)
    assert taken == want + want
    assert [t.ids for t in taken[:3]] == [{10: 12, 11: 13}, {10: 14}, {}]


def test_the_acking_map_is_kept_as_the_two_tuples_it_travels_as():
    import pyarrow as pa

    t = Tuple("src", 3, "default", FIELDS, ("a", 1), {7: 8, 9: 10})
    assert (t.roots, t.root_ids, t.ids) == ((7, 9), (8, 10), {7: 8, 9: 10})
    untracked = Tuple("src", 3, "default", FIELDS, ("a", 1))
    assert (untracked.roots, untracked.root_ids, untracked.ids) == ((), (), {})
    batch = Batch("src", 3, "default", FIELDS, pa.table({"word": ["a"], "n": [1]}), {5: 6})
    assert (batch.roots, batch.root_ids) == ((5,), (6,))
    assert [(row.roots, row.root_ids) for row in batch.tuples()] == [((5,), (6,))]
