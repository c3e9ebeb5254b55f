"""squall.testing.run(inputs=...) in place of a spout with par > 1: each item is emitted once,
by one of the spout's tasks, as the README's first topology splits its lines (each task
emitting every item would double every count)."""

from squall import Bolt, Grouping, Spout, Topology
from squall.testing import TestingSpout, run


class Lines(Spout):
    outputs = ["line"]

    def next_tuple(self):
        return False  # replaced by inputs


class Split(Bolt):
    outputs = ["word"]

    def process(self, tup):
        for word in tup["line"].split():
            self.emit([word])


class ThreeSpoutTasks(Topology):
    lines = Lines.spec(par=3)
    split = Split.spec(inputs={lines: Grouping.shuffle}, par=2)


def test_each_input_is_emitted_once_whatever_the_spouts_parallelism():
    items = [["a b a"], ["b"], ["c"], ["d e"]]
    result = run(ThreeSpoutTasks, inputs={"lines": items})
    assert sorted(result.values("lines")) == sorted(tuple(i) for i in items)
    assert sorted(result.values("split")) == [(w,) for w in ("a", "a", "b", "b", "c", "d", "e")]
    assert sorted(result.acked["lines"]) == [0, 1, 2, 3] and not result.failed["lines"]


def test_a_declared_testing_spout_of_two_tasks_shares_its_items():
    class Numbers(Topology):
        numbers = TestingSpout.declaring("n").spec(items=[[1], [2], [3]], par=2)

    result = run(Numbers)
    assert sorted(result.values("numbers")) == [(1,), (2,), (3,)]
