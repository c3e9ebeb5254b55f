"""`squall local` as a new user runs it (the command `make demo` uses): a throw-away secure
cluster with the web UI, the run summarised, everything stopped. The other tests build
LocalCluster directly, so only this one covers the command itself."""

import re
import subprocess
import sys
from pathlib import Path

TINY = Path(__file__).parent / "topologies" / "tiny.py"


def test_squall_local_runs_a_topology_and_prints_the_ui_address(tmp_path):
    result = subprocess.run(
        [sys.executable, "-m", "squall.cli", "local", str(TINY), "--supervisors", "1"]
        + ["--output-dir", str(tmp_path / "out"), "--timeout", "120"],
        capture_output=True,
        text=True,
        timeout=240,
        cwd=tmp_path,
    )
    assert result.returncode == 0, result.stderr[-3000:]
    # the UI's address carries its token: a browser opened on it is let in
    assert re.search(r"http://127\.0\.0\.1:\d+/\?token=[\w-]{20,}", result.stderr), result.stderr
    cells = [line.strip("│ ").split("│") for line in result.stdout.splitlines() if "│" in line]
    rows = {row[0].strip(): [c.strip() for c in row[1:]] for row in cells}
    assert rows["numbers"][:2] == ["2", "200"], result.stdout  # 2 tasks, 100 each, then dry
    assert "0 spout tuples failed" in result.stdout
    # progress while it runs (a line now and then where standard error is not a terminal)
    assert "tasks starting" in result.stderr or "tuples processed" in result.stderr
