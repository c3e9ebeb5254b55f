"""docs/configuration.md is generated from conf/defaults.yaml by tools/config_reference.py:
it must be current, name every key with its default, and keep the file's comments."""

import importlib.util
import re
import sys
from pathlib import Path

import pytest
import yaml

ROOT = Path(__file__).parents[2]


def generator():
    if "config_reference" in sys.modules:
        return sys.modules["config_reference"]
    spec = importlib.util.spec_from_file_location(
        "config_reference", ROOT / "tools" / "config_reference.py"
    )
    module = importlib.util.module_from_spec(spec)
    sys.modules["config_reference"] = module  # its dataclasses look their module up
    spec.loader.exec_module(module)
    return module


def test_the_generated_reference_is_current():
    gen = generator()
    page = gen.render((ROOT / "conf" / "defaults.yaml").read_text(encoding="utf-8"))
    current = (ROOT / "docs" / "configuration.md").read_text(encoding="utf-8")
    assert current == page, "docs/configuration.md is stale: run python tools/config_reference.py"


def test_every_key_appears_once_with_its_default():
    text = (ROOT / "conf" / "defaults.yaml").read_text(encoding="utf-8")
    page = generator().render(text)
    rows = dict(re.findall(r"^\| `([^`]+)` \| `(.*?)` \|", page, re.M))
    defaults = yaml.safe_load(text)
    assert set(rows) == set(defaults)
    for key, value in defaults.items():
        assert yaml.safe_load(rows[key].replace("\\|", "|")) == value, key


SAMPLE = """\
# The introduction.

# Section one (about it). More words.
a.key: 1          # a note
b.key: "x # not a comment"   # the real note
                             # continued
# A paragraph about c and d.
c.key: [1, 2]
d.key: null
# A note that follows d.

# Two
e.key: {}
"""


def test_sections_paragraphs_and_notes_keep_the_file_layout():
    gen = generator()
    intro, items = gen.parse(SAMPLE)
    assert intro == "The introduction."
    assert items == [
        gen.Text("Section one (about it). More words.", opens_section=True),
        gen.Row("a.key", "a note"),
        gen.Row("b.key", "the real note continued"),
        gen.Text("A paragraph about c and d.", opens_section=False),
        gen.Row("c.key", ""),
        gen.Row("d.key", ""),
        gen.Text("A note that follows d.", opens_section=False),
        gen.Text("Two", opens_section=True),
        gen.Row("e.key", ""),
    ]
    page = generator().render(SAMPLE)
    assert "## Section one\n" in page and "## Two\n" in page
    assert '| `b.key` | `"x # not a comment"` | the real note continued |' in page


def test_a_line_that_is_no_key_is_a_clear_error():
    gen = generator()
    with pytest.raises(gen.ConfigFormatError, match=":2: not a key"):
        gen.parse("a.key: 1\n  - stray\n")
