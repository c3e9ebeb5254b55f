"""Every relative link in README.md and docs/*.md names a file of the repository, and every
#anchor a heading of that file (as GitHub makes anchors), so moving a section or a page
cannot leave a reader at a dead link."""

import re
from pathlib import Path

import pytest

ROOT = Path(__file__).parents[2]
PAGES = [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))]
LINK = re.compile(r"\[[^\]]*\]\(([^)\s]+)\)")


def outside_code(text: str) -> str:
    """The text without fenced code blocks and inline code."""
    text = re.sub(r"^```.*?^```", "", text, flags=re.S | re.M)
    return re.sub(r"`[^`\n]*`", "", text)


def anchors(path: Path) -> set[str]:
    """GitHub's anchors of a Markdown file's headings."""
    text = re.sub(r"^```.*?^```", "", path.read_text(encoding="utf-8"), flags=re.S | re.M)
    found = set()
    for heading in re.findall(r"^#{1,6} +(.+?) *#*$", text, re.M):
        slug = re.sub(r"[^\w\- ]", "", heading.lower()).replace(" ", "-")
        found.add(slug)
    return found


def links(page: Path) -> list[str]:
    return [
        target
        for target in LINK.findall(outside_code(page.read_text(encoding="utf-8")))
        if not re.match(r"[a-z]+:", target)  # http:, https:, mailto:
    ]


@pytest.mark.parametrize("page", PAGES, ids=lambda p: p.name)
def test_relative_links_reach_a_file_and_a_heading(page):
    broken = []
    for target in links(page):
        file_part, _, anchor = target.partition("#")
        dest = (page.parent / file_part).resolve() if file_part else page
        if not dest.exists():
            broken.append(f"{target}: no such file")
        elif anchor and dest.suffix == ".md" and anchor not in anchors(dest):
            broken.append(f"{target}: no heading with that anchor")
    assert not broken, f"{page.relative_to(ROOT)}: {broken}"


def test_the_anchors_follow_githubs_rules():
    sample = ROOT / "docs" / "operations.md"
    assert "5-credentials-per-host" in anchors(sample)
    assert "the-web-ui-and-rest-api" in anchors(sample)
