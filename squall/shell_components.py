"""Storm's shell components: a spout or bolt whose work is done by a subprocess speaking
Storm's multilang protocol (streamparse/pystorm classes, or any language).

    class WordCount(Topology):
        words = ShellSpout.spec(command="streamparse_run", script="spouts.Words",
                                outputs=["word"])
        upper = ShellBolt.spec(command="bash", script="upper.sh", outputs=["word"],
                               inputs=[words])

One subprocess per task, started in the code package's `resources/` directory (its root
when it has none), as Storm does. They are components like any other, so the worker's
executors run them unchanged: a ShellBolt is Storm's BasicBolt. `process` sends the tuple and
returns when the subprocess acks it (raises when it fails it), and what it emits meanwhile is
anchored to that tuple. A bolt that holds tuples to ack them later (pystorm's BatchingBolt)
is not supported: its `process` waits for the ack until topology.subprocess.timeout.secs
and then fails the tuple. A subprocess that breaks the protocol, dies or stops answering is
stopped and started again, and the call raises the cause, so it reaches the topology's errors.
"""

from __future__ import annotations

import itertools
import logging
import shutil
import tempfile
import threading
import time
from pathlib import Path
from typing import Any, ClassVar

from squall.components import Bolt, Spout, TaskContext, Tuple
from squall.worker import multilang_protocol as P
from squall.worker.multilang_process import MultilangError, ShellProcess, command_line

log = logging.getLogger("squall.worker.multilang")
TIMEOUT_KEY = "topology.subprocess.timeout.secs"
HEARTBEAT_SECS = 1.0  # Storm's ShellBolt heartbeat period


def handshake_conf(conf: dict[str, Any]) -> dict[str, Any]:
    """The conf a subprocess is given: the task's, without the worker's credentials."""
    return {k: v for k, v in conf.items() if not k.startswith(_PRIVATE_PREFIXES)}


_PRIVATE_PREFIXES = ("storm.zookeeper.auth", "security.")


class ShellFailure(RuntimeError):
    """A shell component's subprocess failed a tuple or reported an error."""


class _Shell:
    """What ShellSpout and ShellBolt share: the subprocess, its restarts and its reports."""

    needs_code_dir: ClassVar[bool] = True  # executor_factory passes the unpacked code dir
    kind: ClassVar[str] = "shell component"
    collector: Any

    def __init__(
        self, execution_command: str, script: str, code_dir: str | None = None, **kwargs: Any
    ) -> None:
        super().__init__(**kwargs)  # type: ignore[call-arg]
        self.argv = command_line(execution_command, script)
        root = Path(code_dir) if code_dir else Path.cwd()
        self.cwd = root / "resources" if (root / "resources").is_dir() else root
        self.shell: ShellProcess | None = None
        self.lock = threading.RLock()  # the exchange in progress: the task or the heartbeat
        self.held_errors: list[str] = []
        self.metrics: dict[str, Any] = {}
        self.last_exchange = time.monotonic()
        self.emit_error: Exception | None = None  # the first emit the executor refused

    @classmethod
    def spec(  # type: ignore[override]
        cls,
        command: str,
        script: str,
        outputs: list[str] | dict[str, list[str]] | None = None,
        name: str | None = None,
        inputs: Any = None,
        par: int = 1,
        config: dict[str, Any] | None = None,
    ) -> Any:
        """Declare a shell component: `command script` runs in the package's resources dir;
        `outputs` are the default stream's fields or a mapping of stream to fields."""
        from dataclasses import replace

        from squall.topology import ComponentSpec

        spec = ComponentSpec.create(
            cls, name, inputs, par, config, {"execution_command": command, "script": script}
        )
        if isinstance(outputs, dict):
            streams = {s: list(f) for s, f in outputs.items()}
        else:
            streams = {P.DEFAULT_STREAM: list(outputs)} if outputs else {}
        return replace(spec, outputs=streams)

    def initialize(self, conf: dict[str, Any], context: TaskContext) -> None:
        self.conf = conf
        self.context = context
        self.timeout = float(conf.get(TIMEOUT_KEY) or 30)
        self.pid_dir = Path(tempfile.mkdtemp(prefix=f"squall-multilang-{context.task_id}-"))
        self.name = f"{context.component_id}:{context.task_id}"
        self._start()

    def _start(self) -> None:
        shell = ShellProcess(self.argv, self.cwd, self.name, self.timeout)
        self.shell = shell
        ctx = P.topology_context(
            {t: self.context.component_id for t in self.context.component_tasks},
            self.context.task_id,
            self.context.component_id,
        )
        try:
            shell.start(handshake_conf(self.conf), ctx, self.pid_dir)
        except BaseException:
            shell.stop()
            self.shell = None
            raise
        self.last_exchange = time.monotonic()

    def cleanup(self) -> None:
        with self.lock:
            if self.shell is not None:
                self.shell.stop()
                self.shell = None
        shutil.rmtree(getattr(self, "pid_dir", ""), ignore_errors=True)

    def _exchange(self, message: dict[str, Any], step: Any) -> P.Done:
        """Send `message` and carry out the subprocess's answers until `step` says Done. A
        broken subprocess is restarted and the cause raised."""
        with self.lock:
            try:
                if self.shell is None:
                    self._start()
                assert self.shell is not None
                self.shell.send(message)
                while True:
                    outcome = step(self.shell.read())
                    if isinstance(outcome, P.Done):
                        break
                    self._carry_out(outcome)
            except (MultilangError, P.ProtocolError) as exc:
                pid = self.shell.pid if self.shell is not None else 0
                self._restart()
                raise MultilangError(
                    f"{self.kind} {self.name} (pid {pid}, {self.argv}): {exc}; "
                    "its subprocess was restarted"
                ) from exc
            finally:
                self.emit_error, emit_error = None, self.emit_error
            self.last_exchange = time.monotonic()
            if emit_error is not None:
                raise emit_error
            return outcome

    def _restart(self) -> None:
        if self.shell is not None:
            self.shell.stop()
            self.shell = None
        try:
            self._start()
        except (MultilangError, P.ProtocolError, OSError) as exc:
            log.error(
                "%s: restarting the subprocess failed (retried on the next call): %s",
                self.name,
                exc,
            )

    def _carry_out(self, event: P.Event) -> None:
        match event:
            case P.Emit():
                targets: list[int] = []
                try:
                    targets = self.collector.emit(
                        list(event.values), event.stream, event.task, self._msg_id(event)
                    )
                except Exception as exc:  # noqa: BLE001 - an undeclared stream, a wrong arity
                    # raised once the exchange is over: the subprocess is mid-conversation
                    self.emit_error = self.emit_error or exc
                if event.need_task_ids and event.task is None:
                    assert self.shell is not None
                    self.shell.send(list(targets or []))
            case P.Log(msg, level):
                log.log(_LEVELS[level], "%s: %s", self.name, msg)
            case P.ReportError(msg):
                log.error("%s reported: %s", self.name, msg)
                self.held_errors.append(msg)
            case P.Metrics(name, params):
                self.metrics[name] = params
            case P.Sync():
                pass

    def _msg_id(self, event: P.Emit) -> Any:
        return None

    def _raise_held(self, prefix: str) -> None:
        """Errors the subprocess reported reach the topology's errors as the call's
        exception (squall's collector has no reportError)."""
        if self.held_errors:
            text, self.held_errors = "\n".join(self.held_errors), []
            raise ShellFailure(f"{prefix}: {text}")


_LEVELS = {
    "TRACE": logging.DEBUG,
    "DEBUG": logging.DEBUG,
    "INFO": logging.INFO,
    "WARN": logging.WARNING,
    "ERROR": logging.ERROR,
}


class ShellBolt(_Shell, Bolt):
    kind = "shell bolt"

    def initialize(self, conf: dict[str, Any], context: TaskContext) -> None:
        self.ids = itertools.count(1)  # tuple ids: "1", "2", ...
        self.beats = itertools.count(1)  # heartbeat ids: "heartbeat-1", ...
        super().initialize(conf, context)
        self.beat_stop = threading.Event()
        threading.Thread(target=self._beat, name=f"heartbeat-{self.name}", daemon=True).start()

    def process(self, tup: Tuple) -> None:
        tuple_id = str(next(self.ids))
        message = P.bolt_tuple(
            tuple_id, tup.source_component, tup.stream, tup.source_task, list(tup.values)
        )
        done = self._exchange(message, lambda event: P.bolt_step(tuple_id, event))
        if not done.ok:
            text, self.held_errors = "\n".join(self.held_errors), []
            raise ShellFailure(
                f"{self.kind} {self.name} failed tuple {list(tup.values)!r}"
                + (f": {text}" if text else "")
            )

    def idle(self) -> None:
        self._raise_held(f"{self.kind} {self.name} reported")

    def _beat(self) -> None:
        """Storm's heartbeat: a tuple on __heartbeat, answered by sync, whenever the bolt
        has been quiet for a while, so a subprocess that died or hangs while no tuples come
        is found and restarted (and reported with the next tuple's idle)."""
        while not self.beat_stop.wait(HEARTBEAT_SECS):
            if time.monotonic() - self.last_exchange < HEARTBEAT_SECS:
                continue
            if not self.lock.acquire(blocking=False):
                continue
            try:
                beat = P.heartbeat_tuple(f"heartbeat-{next(self.beats)}")
                self._exchange(beat, P.heartbeat_step)
            except (MultilangError, OSError) as exc:
                log.error("%s: %s", self.name, exc)
                self.held_errors.append(str(exc))
            finally:
                self.lock.release()

    def cleanup(self) -> None:
        if hasattr(self, "beat_stop"):
            self.beat_stop.set()
        super().cleanup()


class ShellSpout(_Shell, Spout):
    kind = "shell spout"
    emitted = 0  # emits during the current next/ack/fail

    def next_tuple(self) -> bool:
        self.emitted = 0
        self._exchange(P.spout_command("next"), P.spout_step)
        self._raise_held(f"{self.kind} {self.name} reported")
        return self.emitted > 0

    def ack(self, msg_id: Any) -> None:
        self._exchange(P.spout_command("ack", msg_id), P.spout_step)
        self._raise_held(f"{self.kind} {self.name} reported")

    def fail(self, msg_id: Any) -> None:
        self._exchange(P.spout_command("fail", msg_id), P.spout_step)
        self._raise_held(f"{self.kind} {self.name} reported")

    def _msg_id(self, event: P.Emit) -> Any:
        self.emitted += 1
        return event.msg_id
