"""squall.hot_path's choice between the compiled per-tuple path and its sources: compiled
only where every module has its extension and its source is the one that was compiled."""

from pathlib import Path

import pytest

from squall.hot_path import HOT_PATH, PURE_ENV, Choice, choose, digest


@pytest.fixture
def sources(tmp_path) -> dict[str, Path]:
    found = {}
    for module in HOT_PATH:
        path = tmp_path / f"{module}.py"
        path.write_text(f"# {module}\n")
        found[module] = path
    return found


def recorded(sources: dict[str, Path]) -> dict[str, str]:
    return {module: digest(path) for module, path in sources.items()}


def test_the_compiled_path_runs_where_every_source_is_the_compiled_one(sources):
    assert choose(False, recorded(sources), sources, set(HOT_PATH)) == Choice(True)


def test_the_opt_out_runs_the_sources(sources):
    choice = choose(True, recorded(sources), sources, set(HOT_PATH))
    assert not choice.compiled and PURE_ENV in choice.reason


def test_an_install_that_compiled_nothing_runs_the_sources(sources):
    for record, extensions in ((None, set(HOT_PATH)), (recorded(sources), set())):
        choice = choose(False, record, sources, extensions)
        assert not choice.compiled and "no compiled modules" in choice.reason


def test_one_edited_source_runs_every_module_from_its_source(sources):
    record = recorded(sources)
    edited = sources[HOT_PATH[-1]]
    edited.write_text(edited.read_text() + "# an edit after the build\n")
    choice = choose(False, record, sources, set(HOT_PATH))
    assert not choice.compiled and str(edited) in choice.reason and "changed" in choice.reason


def test_a_module_without_its_extension_or_source_runs_the_sources(sources):
    record = recorded(sources)
    choice = choose(False, record, sources, set(HOT_PATH[1:]))
    assert not choice.compiled and str(sources[HOT_PATH[0]]) in choice.reason
    sources[HOT_PATH[0]].unlink()
    choice = choose(False, record, sources, set(HOT_PATH))
    assert not choice.compiled and "no source" in choice.reason
