"""Storm's multilang protocol as pure data: the messages a worker writes to a shell
component's stdin and the typed events its stdout's messages decode to (the rules of each
exchange: worker/multilang_exchanges.py).

No I/O here (the subprocess shell is worker/multilang_process.py): a message the subprocess
writes is framed (`Framer`) and decoded (`decode`), so every malformed message becomes a
ProtocolError that names what was wrong, and is tested without a subprocess.

Wire format (Storm's JsonSerializer): each message is JSON followed by a line "end". Task id
lists (the answer to an emit with need_task_ids) are JSON lists, everything else objects.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any

END = "end"
HEARTBEAT_STREAM = "__heartbeat"
HEARTBEAT_TASK = -1
DEFAULT_STREAM = "default"
MAX_MESSAGE_LINES = 10_000
MAX_MESSAGE_CHARS = 64 << 20
# Storm's ShellLogHandler levels: trace, debug, info, warn, error
LOG_LEVELS = {0: "TRACE", 1: "DEBUG", 2: "INFO", 3: "WARN", 4: "ERROR"}


class ProtocolError(ValueError):
    """A shell component wrote something the protocol does not allow at this point."""


# --- what the subprocess says ---


@dataclass(frozen=True)
class Pid:
    pid: int


@dataclass(frozen=True)
class Emit:
    values: tuple[Any, ...]
    stream: str = DEFAULT_STREAM
    anchors: tuple[str, ...] = ()
    task: int | None = None  # a direct emit
    need_task_ids: bool = True  # Storm's default: the worker answers with the task ids
    msg_id: Any = None  # a spout's message id (None: untracked)


@dataclass(frozen=True)
class Ack:
    id: str


@dataclass(frozen=True)
class Fail:
    id: str


@dataclass(frozen=True)
class Sync:
    pass


@dataclass(frozen=True)
class Log:
    msg: str
    level: str = "INFO"


@dataclass(frozen=True)
class ReportError:
    msg: str


@dataclass(frozen=True)
class Metrics:
    name: str
    params: Any


Event = Pid | Emit | Ack | Fail | Sync | Log | ReportError | Metrics


# --- framing and decoding ---


def encode(message: Any) -> bytes:
    """One message on the wire: compact JSON, then the "end" line."""
    return (json.dumps(message, separators=(",", ":")) + "\n" + END + "\n").encode()


class Framer:
    """Collects stdout lines into messages: `feed` returns the parsed message when a line
    "end" closes one, else None. Bounded in lines and characters, so a subprocess that never
    writes "end" is an error, not a worker that buffers until it runs out of memory."""

    def __init__(
        self, max_lines: int = MAX_MESSAGE_LINES, max_chars: int = MAX_MESSAGE_CHARS
    ) -> None:
        self.max_lines = max_lines
        self.max_chars = max_chars
        self.lines: list[str] = []
        self.chars = 0

    def feed(self, line: str) -> Any:
        line = line.rstrip("\r\n")
        if line != END:
            self.lines.append(line)
            self.chars += len(line)
            if len(self.lines) > self.max_lines:
                raise ProtocolError(f"a message ran over {self.max_lines} lines without 'end'")
            if self.chars > self.max_chars:
                raise ProtocolError(f"a message ran over {self.max_chars} characters")
            return None
        text, self.lines, self.chars = "\n".join(self.lines), [], 0
        if not text.strip():
            raise ProtocolError("an empty message (a line 'end' with nothing before it)")
        try:
            return json.loads(text)
        except ValueError as exc:
            raise ProtocolError(f"a message is not JSON ({exc}): {text[:200]!r}") from exc


def _field(msg: dict[str, Any], key: str, types: type | tuple[type, ...], what: str) -> Any:
    value = msg.get(key)
    if not isinstance(value, types) or isinstance(value, bool) and bool not in _tuple(types):
        raise ProtocolError(f"{what}: {key!r} must be {_names(types)}, got {value!r}")
    return value


def _tuple(types: type | tuple[type, ...]) -> tuple[type, ...]:
    return types if isinstance(types, tuple) else (types,)


def _names(types: type | tuple[type, ...]) -> str:
    return " or ".join(t.__name__ for t in _tuple(types))


def _emit(msg: dict[str, Any]) -> Emit:
    values = _field(msg, "tuple", list, "emit")
    stream = msg.get("stream")
    stream = DEFAULT_STREAM if stream is None else _field(msg, "stream", str, "emit")
    anchors = msg.get("anchors") or []
    if not isinstance(anchors, list) or not all(isinstance(a, str) for a in anchors):
        raise ProtocolError(f"emit: 'anchors' must be a list of tuple ids, got {anchors!r}")
    task = msg.get("task")
    if task is not None:
        task = _field(msg, "task", int, "emit")
    need = msg.get("need_task_ids", True)
    if not isinstance(need, bool):
        raise ProtocolError(f"emit: 'need_task_ids' must be true or false, got {need!r}")
    return Emit(tuple(values), stream, tuple(anchors), task, need, msg.get("id"))


def _log(msg: dict[str, Any]) -> Log:
    text = _field(msg, "msg", str, "log")
    level = msg.get("level", 2)
    if level not in LOG_LEVELS or isinstance(level, bool):
        raise ProtocolError(f"log: 'level' must be 0-4 (trace to error), got {level!r}")
    return Log(text, LOG_LEVELS[level])


def decode(message: Any) -> Event:
    """The typed event of one message the subprocess wrote, or ProtocolError."""
    if isinstance(message, list):
        raise ProtocolError("a subprocess never sends a task id list; the worker does")
    if not isinstance(message, dict):
        raise ProtocolError(f"a message must be a JSON object, got {message!r}")
    if "pid" in message and "command" not in message:
        return Pid(_field(message, "pid", int, "handshake answer"))
    command = message.get("command")
    match command:
        case "emit":
            return _emit(message)
        case "ack":
            return Ack(str(_field(message, "id", (str, int), "ack")))
        case "fail":
            return Fail(str(_field(message, "id", (str, int), "fail")))
        case "sync":
            return Sync()
        case "log":
            return _log(message)
        case "error":
            return ReportError(_field(message, "msg", str, "error"))
        case "metrics":
            return Metrics(_field(message, "name", str, "metrics"), message.get("params"))
        case None:
            raise ProtocolError(f"a message without a 'command': {str(message)[:200]}")
        case _:
            raise ProtocolError(f"unknown command {command!r}")


# --- what the worker says ---


def handshake(conf: dict[str, Any], context: dict[str, Any], pid_dir: str) -> dict[str, Any]:
    return {"conf": conf, "context": context, "pidDir": pid_dir}


def topology_context(
    task_components: dict[int, str], task_id: int, component_id: str
) -> dict[str, Any]:
    """The handshake's context, as Storm's ShellProcess builds it."""
    return {
        "task->component": {str(t): c for t, c in sorted(task_components.items())},
        "taskid": task_id,
        "componentid": component_id,
    }


def bolt_tuple(
    tuple_id: str, component: str, stream: str, task: int, values: list[Any]
) -> dict[str, Any]:
    return {"id": tuple_id, "comp": component, "stream": stream, "task": task, "tuple": values}


def heartbeat_tuple(tuple_id: str) -> dict[str, Any]:
    return bolt_tuple(tuple_id, "__system", HEARTBEAT_STREAM, HEARTBEAT_TASK, [])


def spout_command(command: str, msg_id: Any = None) -> dict[str, Any]:
    """next, ack or fail (with the message id the spout emitted), activate, deactivate."""
    return {"command": command} if msg_id is None else {"command": command, "id": msg_id}
