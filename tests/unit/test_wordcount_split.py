"""The example word count splits lines with pyarrow, through a fast path for plain lines;
whatever the text, its words are exactly those of the plain regular-expression split that
its `verify` and the benchmark count with."""

import importlib.util
import re
from collections import Counter
from pathlib import Path

import pyarrow as pa
from hypothesis import given, settings
from hypothesis import strategies as st

EXAMPLES = Path(__file__).parents[2] / "examples"


def example(name):
    spec = importlib.util.spec_from_file_location(f"{name}_example", EXAMPLES / f"{name}.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


WC = example("wordcount")
LINES = st.lists(st.text(alphabet="ab Z9'-.\t\r\u00e9\u00c9\u00a0", max_size=12), max_size=30)


@settings(max_examples=300, deadline=None)
@given(LINES)
def test_split_words_equals_the_regular_expression_split(lines):
    separators = re.compile(WC.SEPARATORS)
    expected = Counter(w for line in lines for w in separators.split(line.lower()) if w)
    got = WC.split_words(pa.chunked_array([pa.array(lines, pa.string())]))
    assert Counter(got.to_pylist()) == expected


def test_plain_lines_take_the_fast_path_with_the_same_words():
    lines = pa.array(["a  b", " c d ", "", "it's 9"])
    assert WC.split_words(lines).to_pylist() == ["a", "b", "c", "d", "it's", "9"]


def test_batch_ids_are_signed_64_bit_and_differ_by_partition_and_offset(monkeypatch):
    monkeypatch.syspath_prepend(str(EXAMPLES))  # it imports the split from wordcount
    batch_id = example("exact_wordcount").batch_id
    ids = {batch_id(p, o) for p in ("part-0", "part-1") for o in (0, 10_000)}
    assert len(ids) == 4 and all(-(2**63) <= i < 2**63 for i in ids)
    assert batch_id("part-0", 0) == batch_id("part-0", 0)
