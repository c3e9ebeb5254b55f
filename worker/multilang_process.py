"""The subprocess of one shell component task (Storm's ShellProcess): started from the
component's execution command and script in the code package's resources directory, spoken
to over stdin/stdout with worker/multilang_protocol's messages.

Every read has a deadline (topology.subprocess.timeout.secs): stdout is read by a
thread into a queue, so a subprocess that hangs, dies or writes half a message ends in a
MultilangError, never in a worker thread blocked for good. stderr goes line by line to the
worker log. The subprocess gets the worker's interpreter directory first on its PATH, so
`python` and `streamparse_run` name the worker's own environment. It stays in the worker's
process group, so a supervisor that ends a worker (it kills the group) ends it too; a
subprocess whose worker died otherwise reads EOF on stdin, which pystorm exits on.
"""

from __future__ import annotations

import logging
import os
import queue
import shlex
import subprocess
import sys
import threading
import time
from pathlib import Path
from typing import IO, Any

from .multilang_exchanges import check_pid
from .multilang_protocol import Event, Framer, ProtocolError, decode, encode

log = logging.getLogger("squall.worker.multilang")
MAX_LINE_BYTES = 16 << 20
_EOF = object()


class MultilangError(RuntimeError):
    """The subprocess broke the protocol, died or did not answer in time."""


def command_line(execution_command: str, script: str) -> list[str]:
    """Storm runs `execution_command script`; streamparse puts options in `script`
    ("-s json module.Class"), so both are split as a shell would, without a shell."""
    return shlex.split(execution_command) + shlex.split(script)


class ShellProcess:
    def __init__(self, argv: list[str], cwd: Path, name: str, timeout: float) -> None:
        self.argv = argv
        self.cwd = cwd
        self.name = name  # "component:task", for the log
        self.timeout = timeout
        self.process: subprocess.Popen[bytes] | None = None
        self.lines: queue.Queue[Any] = queue.Queue()
        self.framer = Framer()
        self.pid = 0

    def start(self, conf: dict[str, Any], context: dict[str, Any], pid_dir: Path) -> int:
        """Start the subprocess and hand it the handshake; its pid, once it answered."""
        env = dict(os.environ)
        env["PATH"] = os.pathsep.join([str(Path(sys.executable).parent), env.get("PATH", "")])
        pid_dir.mkdir(parents=True, exist_ok=True)
        try:
            self.process = subprocess.Popen(
                self.argv,
                cwd=self.cwd,
                env=env,
                stdin=subprocess.PIPE,
                stdout=subprocess.PIPE,
                stderr=subprocess.PIPE,
            )
        except OSError as exc:
            raise MultilangError(f"cannot start {self.argv} in {self.cwd}: {exc}") from exc
        assert self.process.stdout is not None and self.process.stderr is not None
        self.lines = queue.Queue()
        self.framer = Framer()
        threading.Thread(
            target=self._pump, args=(self.process.stdout, self.lines), daemon=True
        ).start()
        threading.Thread(target=self._stderr, args=(self.process.stderr,), daemon=True).start()
        self.send({"conf": conf, "context": context, "pidDir": str(pid_dir)})
        self.pid = check_pid(self.read())
        log.info("%s: subprocess %s started as pid %d", self.name, self.argv, self.pid)
        return self.pid

    @staticmethod
    def _pump(stdout: IO[bytes], lines: queue.Queue[Any]) -> None:
        try:
            while line := stdout.readline(MAX_LINE_BYTES):
                lines.put(line)
        except (OSError, ValueError):
            pass
        lines.put(_EOF)

    def _stderr(self, stderr: IO[bytes]) -> None:
        try:
            for line in stderr:
                log.warning("%s stderr: %s", self.name, line.decode(errors="replace").rstrip())
        except (OSError, ValueError):
            pass

    def send(self, message: Any) -> None:
        process = self.process
        if process is None or process.stdin is None:
            raise MultilangError("the subprocess is not running")
        try:
            process.stdin.write(encode(message))
            process.stdin.flush()
        except (BrokenPipeError, OSError, ValueError) as exc:
            raise MultilangError(f"the subprocess went away ({self._exit()}): {exc}") from exc

    def read(self) -> Event:
        """The next message as a typed event, within the timeout."""
        deadline = time.monotonic() + self.timeout
        while True:
            try:
                line = self.lines.get(timeout=max(0.0, deadline - time.monotonic()))
            except queue.Empty:
                raise MultilangError(
                    f"the subprocess did not answer within {self.timeout:g}s "
                    "(topology.subprocess.timeout.secs)"
                ) from None
            if line is _EOF:
                raise MultilangError(f"the subprocess closed its stdout ({self._exit()})")
            if len(line) >= MAX_LINE_BYTES and not line.endswith(b"\n"):
                raise ProtocolError(f"a line longer than {MAX_LINE_BYTES} bytes")
            message = self.framer.feed(line.decode(errors="replace"))
            if message is not None:
                return decode(message)

    def _exit(self) -> str:
        process = self.process
        if process is None:
            return "not started"
        try:
            code = process.wait(timeout=1)
        except subprocess.TimeoutExpired:
            return "still running"
        return f"exit status {code}"

    def stop(self, grace: float = 2.0) -> None:
        """End the subprocess: close its stdin (a polite one exits on EOF), kill it if it
        has not exited within `grace` seconds."""
        process, self.process = self.process, None
        if process is None:
            return
        for stream in (process.stdin,):
            try:
                if stream is not None:
                    stream.close()
            except OSError:
                pass
        try:
            process.wait(timeout=grace)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait(timeout=10)
