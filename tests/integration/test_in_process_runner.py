"""squall.testing: topologies run in this process, without ZooKeeper, nimbus or workers, on
the same executors and reliability machines as a worker (and real Spark for SparkBolts)."""

import importlib.util
import sys
from collections import Counter
from pathlib import Path

import pytest

from squall import Bolt, Grouping, Spout, Topology
from squall.testing import RunFailed, RunTimeout, TestingSpout, run

EXAMPLES = Path(__file__).parents[2] / "examples"


class Sentences(Spout):
    outputs = ["line"]

    def next_tuple(self):
        return False  # replaced by inputs in every test


class Split(Bolt):
    outputs = ["word"]

    def process(self, tup):
        if tup["line"] == "boom":
            raise ValueError("cannot split boom")
        for word in tup["line"].split():
            self.emit([word])


class Count(Bolt):
    outputs = ["word", "count"]

    def initialize(self, conf, context):
        self.counts = Counter()

    def process(self, tup):
        self.counts[tup["word"]] += 1
        self.emit([tup["word"], self.counts[tup["word"]]])


class WordCount(Topology):
    lines = Sentences.spec()
    split = Split.spec(inputs={lines: Grouping.shuffle}, par=2)
    count = Count.spec(inputs={split: Grouping.fields("word")}, par=3)


TRACKING = pytest.mark.parametrize("spouts_track", [True, False], ids=["spouts", "ackers"])


@TRACKING
def test_every_component_output_and_every_tuple_acked(spouts_track):
    conf = {"topology.spouts.track.trees": spouts_track}
    result = run(WordCount, inputs={"lines": [["a b a"], ["b c"]]}, conf=conf)
    assert sorted(result.values("split")) == [("a",), ("a",), ("b",), ("b",), ("c",)]
    finals = {}
    for word, count in result.values("count"):
        finals[word] = max(count, finals.get(word, 0))
    assert finals == {"a": 2, "b": 2, "c": 1}  # fields grouping: one counter per word
    assert sorted(result.acked["lines"]) == [0, 1]
    assert result.failed.get("lines", []) == []
    assert result.tree_trackers == (["lines"] if spouts_track else ["__acker"])


@TRACKING
def test_a_failing_tuple_is_failed_at_its_spout_and_its_error_reported(spouts_track):
    conf = {"topology.spouts.track.trees": spouts_track}
    result = run(WordCount, inputs={"lines": [["x y"], ["boom"], ["z"]]}, conf=conf)
    assert sorted(result.acked["lines"]) == [0, 2]
    assert result.failed["lines"] == [1]
    assert result.tree_trackers == (["lines"] if spouts_track else ["__acker"])
    assert any("cannot split boom" in text for text in result.errors["split"])
    assert sorted(result.values("split")) == [("x",), ("y",), ("z",)]


def test_without_ackers_nothing_is_tracked_but_everything_is_processed():
    result = run(WordCount, inputs={"lines": [["a"], ["b"]]}, conf={"topology.acker.executors": 0})
    assert sorted(result.values("count")) == [("a", 1), ("b", 1)]
    assert sorted(result.acked["lines"]) == [0, 1]  # untracked: acked once sent (Storm)
    assert result.tree_trackers == []


class Doubler(Bolt):
    outputs = ["n"]

    def process(self, tup):
        self.emit([tup["n"] * 2])


class Forever(Spout):
    outputs = ["n"]

    def next_tuple(self):
        self.emit([1])
        return True


class Endless(Topology):
    numbers = Forever.spec()
    double = Doubler.spec(inputs=["numbers"])


def test_a_topology_that_never_finishes_times_out():
    with pytest.raises(RunTimeout, match=r"numbers \(task \d+\) still emitting"):
        run(Endless, timeout=1)


class Broken(Bolt):
    outputs = ["n"]

    def initialize(self, conf, context):
        raise OSError("no such database: orders")


class BrokenStart(Topology):
    numbers = TestingSpout.declaring("n").spec(items=[[1]])
    broken = Broken.spec(inputs=["numbers"])


def test_a_task_that_cannot_start_fails_the_run_with_its_cause():
    with pytest.raises(RunFailed, match="broken could not start: OSError: no such database"):
        run(BrokenStart, timeout=30)


def test_inputs_name_only_spouts_of_the_topology():
    with pytest.raises(ValueError, match="not components"):
        run(WordCount, inputs={"nope": [["a"]]})
    with pytest.raises(ValueError, match="bolt"):
        run(WordCount, inputs={"split": [["a"]]})


def test_a_testing_spout_in_a_topology_of_its_own():
    class Numbers(Topology):
        numbers = TestingSpout.declaring("n").spec(items=[[1], [2], [3]])
        double = Doubler.spec(inputs=["numbers"])

    result = run(Numbers)
    assert sorted(result.values("double")) == [(2,), (4,), (6,)]


def test_the_word_count_example_runs_in_process_with_spark(tmp_path):
    """examples/wordcount.py as it is: a partitioned file spout (in-memory coordination),
    a vectorized bolt, a SparkBolt on a local SparkSession and a file sink."""
    spec = importlib.util.spec_from_file_location("wordcount", EXAMPLES / "wordcount.py")
    module = importlib.util.module_from_spec(spec)
    sys.modules["wordcount"] = module
    spec.loader.exec_module(module)
    result = run(module.WordCount, output_dir=tmp_path, timeout=240)
    texts = [p.read_text() for p in sorted(Path(module.INPUT).iterdir())]
    assert module.totals(tmp_path) == module.plain_count(texts)
    # what the SparkBolt returned from each micro-batch is its recorded output too
    summed = Counter()
    for word, count in result.values("count"):
        summed[word] += count
    assert summed == module.plain_count(texts)
