"""The `squall` command's hygiene, offline (no nimbus: the address given answers nothing):
versions, argument errors before any connection, `submit --dry-run`, the size warning and
error lines that rich must not take for markup."""

import socket

import pytest
from click.testing import CliRunner

from squall import __version__
from squall.cli import main
from squall.code_package import package_files
from squall.hot_path import describe
from squall.storm_version import storm_compatible
from squall.submit import Packed, size_warning

TOPOLOGY = """
from squall import Bolt, Grouping, Spout, Topology


class Numbers(Spout):
    outputs = ["n"]

    def next_tuple(self):
        return False


class Sink(Bolt):
    def process(self, tup):
        pass


class Dry(Topology):
    numbers = Numbers.spec()
    sink = Sink.spec(inputs={numbers: Grouping.shuffle})
"""


@pytest.fixture
def dead_nimbus():
    """HOST:PORT where nothing listens (bound, never listening)."""
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        yield f"127.0.0.1:{s.getsockname()[1]}"


def run(*args, conf=None):
    base = ["--config", str(conf)] if conf else []
    return CliRunner().invoke(main, [*base, *args])


@pytest.fixture
def open_conf(tmp_path):
    conf = tmp_path / "open.yaml"
    conf.write_text(f"security: false\nstorm.local.dir: {tmp_path / 'local'}\n")
    return conf


def test_versions(open_conf):
    short = run("--version")
    assert short.exit_code == 0
    storm = storm_compatible(__version__)
    path = describe()  # which per-tuple path runs: compiled, or interpreted and why
    assert short.output.strip() == f"squall {__version__} (Storm {storm}), per-tuple path {path}"
    long = run("version", conf=open_conf)
    assert long.exit_code == 0, long.output
    lines = long.output.splitlines()
    assert lines[0] == f"squall {__version__}"
    assert lines[1].startswith(f"Storm {storm_compatible(__version__)}")
    assert lines[2].startswith("Python 3.")
    assert lines[3] == f"per-tuple path: {path}"


@pytest.mark.parametrize(
    "args, problem",
    [
        (["set_log_level", "-l", "ROOT=LOUD", "t"], "'LOUD' is not one of"),
        (["set-log-level", "t"], "at least one"),
        (["upload-credentials", "t", "k1", "v1", "k2"], "pairs"),
        (["blobstore", "create", "k", "-a", "x:y:z"], "not a valid access control type"),
        (["blobstore", "replication", "k", "--update"], "Replication factor needed"),
    ],
)
def test_argument_errors_come_before_any_connection(open_conf, dead_nimbus, args, problem):
    result = run("--nimbus", dead_nimbus, *args, conf=open_conf)
    assert result.exit_code in (1, 2), result.output
    assert problem in result.output
    assert "cannot talk to nimbus" not in result.output


def test_storm_spellings_are_the_same_commands(open_conf):
    for a, b in [("set_log_level", "set-log-level"), ("get-errors", "get_errors")]:
        help_a = run(a, "--help", conf=open_conf).output
        assert help_a.replace(a, b) == run(b, "--help", conf=open_conf).output
    listed = run("--help").output
    assert "set_log_level" in listed and "set-log-level" not in listed  # aliases hidden
    assert "--wait-time-secs" in run("kill", "--help", conf=open_conf).output
    rebalance = run("rebalance", "--help", conf=open_conf).output
    assert "--wait-time-secs" in rebalance and "--executor" in rebalance


def test_submit_dry_run_lists_the_package_and_sends_nothing(tmp_path, open_conf, dead_nimbus):
    project = tmp_path / "project"
    (project / "__pycache__").mkdir(parents=True)
    (project / ".git").mkdir()
    (project / "data").mkdir()
    (project / "dry.py").write_text(TOPOLOGY)
    (project / "data" / "words.txt").write_text("a b c\n" * 100)
    (project / "__pycache__" / "dry.cpython-311.pyc").write_bytes(b"x")
    (project / ".git" / "HEAD").write_text("ref")
    result = run("--nimbus", dead_nimbus, "submit", str(project / "dry.py"), "--dry-run")
    assert result.exit_code == 0, result.output
    lines = result.output.splitlines()
    assert [line.split()[-1] for line in lines[:2]] == ["data/words.txt", "dry.py"]
    assert lines[0].split()[0] == "600"
    assert lines[2].startswith("2 files, ") and "topology dry " in lines[2]
    assert "nothing submitted" in lines[2]
    assert package_files(project) == [("data/words.txt", 600), ("dry.py", len(TOPOLOGY))]


def test_submit_dry_run_still_checks_the_topology(tmp_path, dead_nimbus):
    (tmp_path / "dry.py").write_text(TOPOLOGY)
    bad = run(
        "--nimbus", dead_nimbus, "submit", str(tmp_path / "dry.py"), "--dry-run", "--name", "a/b"
    )
    assert bad.exit_code == 1 and "InvalidTopologyException" in bad.output


def test_size_warning_names_the_largest_files(tmp_path):
    files = (("small.py", 10), ("big.csv", 120_000_000), ("mid.bin", 5_000_000))
    packed = Packed("t", tmp_path, files, b"x" * 2000)
    assert size_warning(packed, limit=2000) is None
    warning = size_warning(packed, limit=1999)
    assert warning is not None
    assert "big.csv (120.0 MB), mid.bin (5.0 MB), small.py" in warning
    assert "--dry-run" in warning and str(tmp_path) in warning


def test_error_text_is_shown_whole_not_as_markup(tmp_path):
    conf = tmp_path / "bad.yaml"
    conf.write_text("nimbus.seeds: [bold]x[/bold] [red]y\n  : z: [\n")
    result = run("list", conf=conf)
    assert result.exit_code == 1
    assert "[bold]x[/bold] [red]y" in result.output


def test_squall_local_progress_says_how_far_a_run_is():
    from squall.commands.local_run import progress_line

    assert progress_line(None) == "tasks starting"
    now = {"executed": 120, "pending": 4, "failed": 0, "errors": 1, "spouts_idle": False}
    assert progress_line(now) == (
        "120 tuples processed, 4 pending, 0 failed, 1 errors; spouts emitting"
    )
    assert progress_line({**now, "spouts_idle": True}).endswith("input done")
