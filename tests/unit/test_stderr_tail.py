"""StderrTail keeps what this process and a child started inside it print to stderr, passes
it on unchanged, and gives fd 2 back when it closes (the child keeps the pipe)."""

import os
import subprocess
import sys

from squall.local import wait_for
from squall.worker.stderr_tail import StderrTail


def test_the_tail_holds_lines_of_this_process_and_of_a_child_started_inside():
    before = os.fstat(2)
    child = None
    try:
        with StderrTail(keep=2) as tail:
            print("first", file=sys.stderr, flush=True)
            child = subprocess.Popen(
                ["sh", "-c", "echo 'child one' >&2; read _; echo 'child two' >&2"],
                stdin=subprocess.PIPE,
            )
            wait_for(lambda: "child one" in tail.lines(), 10, "the child's first line")
        after = os.fstat(2)
        assert (after.st_dev, after.st_ino) == (before.st_dev, before.st_ino)  # fd 2 given back
        child.communicate(b"\n", timeout=10)  # the child still writes into the tail
        wait_for(lambda: tail.lines() == ["child one", "child two"], 10, "its last line")
    finally:
        if child is not None and child.poll() is None:
            child.kill()
            child.wait()
