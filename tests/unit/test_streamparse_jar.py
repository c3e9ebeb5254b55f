"""The Leiningen stand-in (tests/integration/streamparse_jar.py) packs what `lein jar` would
for the project `sparse quickstart` generates, and prints what streamparse reads."""

import zipfile
from pathlib import Path

import pytest

from tests.integration.streamparse_jar import ProjectError, lein, parse_project

streamparse = pytest.importorskip("streamparse")
TEMPLATE = Path(streamparse.__file__).parent / "bootstrap" / "project" / "project.jinja2.clj"
# the project.clj `sparse quickstart wordcount` writes (its template, rendered as it renders it)
QUICKSTART_CLJ = TEMPLATE.read_text().replace("{{ project_name }}", "wordcount")


def test_the_quickstart_project_clj_is_read_with_leiningens_defaults():
    project = parse_project(QUICKSTART_CLJ)
    assert (project.name, project.version) == ("wordcount", "0.0.1-SNAPSHOT")
    assert project.source_paths == ("src",)  # Leiningen's default
    assert project.resource_paths == ("_resources",)
    assert project.target_path == "_build"
    assert project.dependencies == (
        ("org.apache.storm/storm-core", "1.1.0"),
        ("org.apache.storm/flux-core", "1.1.0"),
    )
    assert r"\.yaml" in project.exclusions and "META-INF" in project.exclusions


@pytest.fixture
def project_dir(tmp_path) -> Path:
    """A quickstart project as `sparse submit` leaves it before `lein jar`: src/ copied to
    _resources/resources/."""
    (tmp_path / "project.clj").write_text(QUICKSTART_CLJ)
    for root in (tmp_path / "src", tmp_path / "_resources" / "resources"):
        (root / "bolts").mkdir(parents=True)
        (root / "bolts" / "wordcount.py").write_text("class WordCountBolt: ...\n")
        (root / "bolts" / "settings.yaml").write_text("excluded: true\n")
    return tmp_path


def test_lein_jar_packs_sources_and_resources_less_exclusions(project_dir, capsys):
    assert lein(["jar"], project_dir) == 0
    jar = project_dir / "_build" / "wordcount-0.0.1-SNAPSHOT.jar"
    assert capsys.readouterr().out == f"Created {jar}\n"  # what streamparse parses
    with zipfile.ZipFile(jar) as packed:
        assert sorted(packed.namelist()) == [
            "META-INF/MANIFEST.MF",
            "bolts/wordcount.py",
            "resources/bolts/wordcount.py",
        ]
    assert lein(["clean"], project_dir) == 0
    assert not (project_dir / "_build").exists()


def test_lein_uberjar_deps_and_unknown_tasks(project_dir, capsys):
    assert lein(["uberjar"], project_dir) == 0
    created = capsys.readouterr().out.splitlines()
    assert [line.rsplit("/", 1)[-1] for line in created] == [
        "wordcount-0.0.1-SNAPSHOT.jar",
        "wordcount-0.0.1-SNAPSHOT-standalone.jar",
    ]
    assert lein(["deps", ":tree"], project_dir) == 0
    assert '[org.apache.storm/storm-core "1.1.0"]' in capsys.readouterr().out
    assert lein(["repl"], project_dir) == 2
    assert "repl is not supported" in capsys.readouterr().err
    with pytest.raises(ProjectError, match="no project.clj"):
        lein(["jar"], project_dir / "_build")
