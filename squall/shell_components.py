"""Storm's shell components: a spout or bolt whose work is done by a subprocess speaking
Storm's multilang protocol (streamparse/pystorm classes, or any language).

    class WordCount(Topology):
        words = ShellSpout.spec(command="streamparse_run", script="spouts.Words",
                                outputs=["word"])
        upper = ShellBolt.spec(command="bash", script="upper.sh", outputs=["word"],
                               inputs=[words])

One subprocess per task, started in the code package's `resources/` directory (its root
when it has none), as Storm does. They are components like any other, so the worker's
executors run them unchanged, and a ShellBolt is Storm's BasicBolt: `process` sends the tuple
and returns when the subprocess acks it (raises when it fails it), and what it emits
meanwhile is anchored to that tuple. A bolt that holds tuples to ack them later (pystorm's
BatchingBolt) is not supported: its `process` waits for the ack until
topology.subprocess.timeout.secs and then fails the tuple. A tick tuple
(topology.tick.tuple.freq.secs) is sent as Storm sends it and waits for its ack the same way,
which pystorm's Bolt and storm.py's BasicBolt give. A broken subprocess is restarted and the
call raises the cause (worker/multilang_task.py), so it reaches the topology's errors.
"""

from __future__ import annotations

import itertools
import shutil
import tempfile
import threading
from dataclasses import replace
from pathlib import Path
from typing import Any, ClassVar

from squall.components import Bolt, Spout, TaskContext, Tuple
from squall.worker import multilang_exchanges as X
from squall.worker import multilang_protocol as P
from squall.worker.multilang_process import ShellProcess, command_line
from squall.worker.multilang_task import ShellTask

TIMEOUT_KEY = "topology.subprocess.timeout.secs"
HEARTBEAT_SECS = 1.0  # Storm's ShellBolt heartbeat period
_PRIVATE_PREFIXES = ("storm.zookeeper.auth", "security.")
_PRIVATE_WORDS = ("password", "passwd", "secret", "token", "payload", "private")


def handshake_conf(conf: dict[str, Any]) -> dict[str, Any]:
    """The conf a subprocess is given: the task's, without the worker's credentials (its
    ZooKeeper login) or anything named like a secret: a script may log what it is given."""
    return {
        k: v
        for k, v in conf.items()
        if not k.startswith(_PRIVATE_PREFIXES) and not any(w in k.lower() for w in _PRIVATE_WORDS)
    }


class ShellFailure(RuntimeError):
    """A shell component's subprocess failed a tuple or reported an error."""


class _Shell:
    """What ShellSpout and ShellBolt share: the declaration and the task's subprocess."""

    needs_code_dir: ClassVar[bool] = True  # executor_factory passes the unpacked code dir
    kind: ClassVar[str] = "shell component"
    own_thread: ClassVar[bool] = True  # every call waits on the subprocess
    collector: Any
    task: ShellTask

    def __init__(
        self, execution_command: str, script: str, code_dir: str | None = None, **kwargs: Any
    ) -> None:
        super().__init__(**kwargs)  # type: ignore[call-arg]
        self.argv = command_line(execution_command, script)
        root = Path(code_dir) if code_dir else Path.cwd()
        self.cwd = root / "resources" if (root / "resources").is_dir() else root

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
        name = f"{context.component_id}:{context.task_id}"
        timeout = float(conf.get(TIMEOUT_KEY) or 30)
        self.pid_dir = Path(tempfile.mkdtemp(prefix=f"squall-multilang-{context.task_id}-"))
        handshake_context = P.topology_context(
            context.task_components or {t: context.component_id for t in context.component_tasks},
            context.task_id,
            context.component_id,
        )
        self.task = ShellTask(
            lambda: ShellProcess(self.argv, self.cwd, name, timeout),
            (handshake_conf(conf), handshake_context, self.pid_dir),
            self._emit,
            f"{self.kind} {name} {self.argv}",
        )
        self.task.start()

    def cleanup(self) -> None:
        if hasattr(self, "task"):
            self.task.stop()
            shutil.rmtree(self.pid_dir, ignore_errors=True)

    def _emit(self, event: P.Emit) -> list[int]:
        return self.collector.emit(list(event.values), event.stream, event.task, None)

    def _raise_reported(self) -> None:
        """Errors the subprocess reported reach the topology's errors as the call's
        exception (squall's collector has no reportError)."""
        reported = self.task.take_reported()
        if reported:
            raise ShellFailure(f"{self.task.what} reported: " + "\n".join(reported))


class ShellBolt(_Shell, Bolt):  # type: ignore[misc]  # _Shell.spec: Storm's shell declaration
    kind = "shell bolt"

    def initialize(self, conf: dict[str, Any], context: TaskContext) -> None:
        self.ids = itertools.count(1)  # tuple ids: "1", "2", ...
        super().initialize(conf, context)
        self.beat_stop = threading.Event()
        threading.Thread(target=self._beat, name=f"heartbeat-{self.task.what}", daemon=True).start()

    def process(self, tup: Tuple) -> None:
        done = self._send(tup)
        if not done.ok:
            reported = "\n".join(self.task.take_reported())
            raise ShellFailure(
                f"{self.task.what} failed tuple {list(tup.values)!r}"
                + (f": {reported}" if reported else "")
            )

    def process_tick(self, tup: Tuple) -> None:
        """A tick goes to the subprocess as Storm's ShellBolt sends it, a tuple like any
        other (comp `__system`, stream `__tick`, task -1, tuple [period]; pystorm calls
        `process_tick`). Its ack or fail ends the exchange and means nothing else: the tick
        is not anchored, so a fail is not a failure (Storm acks or fails it as a no-op);
        what the subprocess reported meanwhile is raised, as no input may come to raise it."""
        self._send(tup)
        self._raise_reported()

    def _send(self, tup: Tuple) -> X.Done:
        """Send one tuple; the subprocess's ack or fail of it."""
        tuple_id = str(next(self.ids))
        message = P.bolt_tuple(
            tuple_id, tup.source_component, tup.stream, tup.source_task, list(tup.values)
        )
        return self.task.exchange(message, lambda event: X.bolt_step(tuple_id, event))

    def idle(self) -> None:
        """What the subprocess reported without failing a tuple, once the input drained."""
        self._raise_reported()

    def _beat(self) -> None:
        while not self.beat_stop.wait(HEARTBEAT_SECS):
            self.task.beat_if_quiet(HEARTBEAT_SECS)

    def cleanup(self) -> None:
        if hasattr(self, "beat_stop"):
            self.beat_stop.set()
        super().cleanup()


class ShellSpout(_Shell, Spout):  # type: ignore[misc]  # as ShellBolt
    """`next_tuple`, `ack` and `fail` are each an exchange ended by the subprocess's sync;
    its emits carry the message id it gave (none: untracked)."""

    kind = "shell spout"
    emitted = 0  # emits during the current next_tuple

    def next_tuple(self) -> bool:
        self.emitted = 0
        self.task.exchange(P.spout_command("next"), X.spout_step)
        self._raise_reported()
        return self.emitted > 0

    def ack(self, msg_id: Any) -> None:
        self.task.exchange(P.spout_command("ack", msg_id), X.spout_step)
        self._raise_reported()

    def fail(self, msg_id: Any) -> None:
        self.task.exchange(P.spout_command("fail", msg_id), X.spout_step)
        self._raise_reported()

    def _emit(self, event: P.Emit) -> list[int]:
        self.emitted += 1
        return self.collector.emit(list(event.values), event.stream, event.task, event.msg_id)
