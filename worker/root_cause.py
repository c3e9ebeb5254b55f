"""The cause of a failure in one line: what a user reads in TopologyInfo's errors.

A failed Spark call surfaces in Python as a py4j Py4JJavaError (or a PySpark exception that
wraps the Java one) whose text is a Java stack of a hundred "\\tat org.apache..." lines; the
cause, often several getCause() links deep, is one "ExceptionClass: message" among them. This
module finds that line: through the JVM's cause chain while the JVM answers, else from the
text. A Python exception is "Type: message".
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from typing import Any

MAX_CAUSE_CHARS = 500
MAX_CHAIN = 32  # a cause chain is short; a cycle or a hostile object must not loop forever
_STACK_LINE = re.compile(r"^\s*(at |\.\.\. \d+ more|JVM stacktrace:)")


class KnownCause(RuntimeError):
    """A failure whose cause was found outside the exception: what a JVM printed before it
    exited (see `jvm_exit_cause`)."""

    def __init__(self, cause: str) -> None:
        super().__init__(cause)
        self.cause = cause


def one_line(text: str) -> str:
    """`text` without stack lines, its lines joined by spaces and capped."""
    lines = []
    for line in text.splitlines():
        if _STACK_LINE.match(line):
            continue
        if line.strip():
            lines.append(line.strip())
    joined = " ".join(lines)
    return joined if len(joined) <= MAX_CAUSE_CHARS else joined[: MAX_CAUSE_CHARS - 3] + "..."


def python_cause(text: str) -> str | None:
    """The exception line ending a Python traceback inside `text` (a UDF's error, as Spark's
    PythonException carries it), or None when there is no traceback."""
    head, marker, tail = text.rpartition("Traceback (most recent call last):")
    if not marker:
        return None
    lines = [
        line
        for line in tail.splitlines()
        if re.match(r"^[A-Za-z_][\w.]*(: |$)", line) and not line.startswith("SQLSTATE")
    ]
    return lines[0].strip() if lines else None  # a message's later lines may look alike


def deepest(chain: Sequence[str]) -> str:
    """The last of a cause chain (outermost first) in one line: its first line, which holds
    the class and message (further lines are query plans and SQL context), or for an error
    raised in Spark's Python workers the class and the Python exception that ended it."""
    if not chain:
        return ""
    last = chain[-1].strip()
    raised_in_python = python_cause(last)
    if raised_in_python is not None:
        return one_line(f"{last.split(':', 1)[0]}: {raised_in_python}")
    return one_line(last.splitlines()[0] if last else last)


def cause_in_trace(text: str) -> str:
    """The deepest cause in a Java stack trace's text: the last "Caused by:" line, else the
    first line that names an exception class (py4j puts it after "An error occurred while
    calling ...\\n: ")."""
    caused = [line for line in text.splitlines() if line.startswith("Caused by: ")]
    if caused:
        return one_line(caused[-1].removeprefix("Caused by: "))
    for line in text.splitlines():
        candidate = line.removeprefix(": ").strip()
        if re.match(r"^[\w$]+(\.[\w$]+)+(: |$)", candidate):
            return one_line(candidate)
    return one_line(text)


_LOG_LINE = re.compile(r"^\d\d/\d\d/\d\d \d\d:\d\d:\d\d ")  # log4j's default layout


def jvm_exit_cause(lines: Sequence[str]) -> str | None:
    """Why a JVM exited during its start, from the lines it printed: the exception that ended
    its main thread, else the JVM launcher's "Error:" with the line before it (which names the
    bad option); None when the lines do not say."""
    main = 'Exception in thread "main" '
    for line in reversed(lines):
        if line.startswith(main):
            return one_line(line.removeprefix(main))
    for i, line in enumerate(lines):
        if line.startswith("Error: "):
            before = lines[i - 1] if i else ""
            skip = not before.strip() or _STACK_LINE.match(before) or _LOG_LINE.match(before)
            return one_line(line if skip else f"{before} {line}")
    return None


def _java_chain(throwable: Any) -> list[str]:
    """toString() of `throwable` and its causes, outermost first (calls into the JVM)."""
    chain: list[str] = []
    while throwable is not None and len(chain) < MAX_CHAIN:
        chain.append(str(throwable.toString()))
        throwable = throwable.getCause()
    return chain


def _text(exc: BaseException) -> str:
    try:
        return str(exc)
    except Exception:  # noqa: BLE001 - str() of a py4j error calls the JVM, which may be gone
        return ""


def root_cause(exc: BaseException) -> str:
    """The one line that says why `exc` happened."""
    if isinstance(exc, KnownCause):
        return one_line(exc.cause)
    throwable = getattr(exc, "java_exception", None)
    if throwable is None:
        throwable = getattr(exc, "_origin", None)  # PySpark's captured exceptions
    if throwable is not None:
        try:
            chain = _java_chain(throwable)
        except Exception:  # noqa: BLE001 - the JVM may be gone; the text may still say it
            chain = []
        if chain:
            return deepest(chain)
    message = _text(exc)
    if message and (throwable is not None or "\tat " in message):
        return cause_in_trace(message)
    return one_line(f"{type(exc).__name__}: {message}" if message else type(exc).__name__)
