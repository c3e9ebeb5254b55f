"""README.md shows the first topology's code; examples/first_topology.py runs it (and a live
test checks its output on a cluster). Both must stay the same code, word for word."""

import re
from pathlib import Path

ROOT = Path(__file__).parents[2]


def example_code() -> str:
    text = (ROOT / "examples" / "first_topology.py").read_text(encoding="utf-8")
    match = re.search(r"^# README begin\n(.*?)^# README end\n", text, re.S | re.M)
    assert match, "examples/first_topology.py lost its '# README begin/end' markers"
    return match.group(1)


def readme_blocks() -> list[str]:
    text = (ROOT / "README.md").read_text(encoding="utf-8")
    return re.findall(r"^```python\n(.*?)^```$", text, re.S | re.M)


def test_the_readme_shows_the_example_file_code_exactly():
    shown = [b for b in readme_blocks() if "class FirstTopology" in b]
    assert len(shown) == 1, "README.md must show the first topology in one python block"
    # trailing blank lines aside: ruff format drops them from a markdown code block
    assert shown[0].rstrip() == example_code().rstrip()


def test_the_example_marks_a_whole_topology():
    code = example_code()
    assert "class FirstTopology(Topology)" in code and code.startswith("from ")
