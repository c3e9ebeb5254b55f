"""The classes users subclass: Spout, Bolt and SparkBolt.

A component only talks to the worker through its `collector` (set by the worker before
`initialize`), so these classes import nothing from the worker and can be unit-tested with a
fake collector.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from dataclasses import dataclass, field
from types import MappingProxyType
from typing import TYPE_CHECKING, Any, ClassVar, NamedTuple, Protocol

DEFAULT_STREAM = "default"  # Storm's Utils.DEFAULT_STREAM_ID
# Storm's Constants: where a tick tuple comes from (topology.tick.tuple.freq.secs)
SYSTEM_COMPONENT_ID = "__system"
SYSTEM_TASK_ID = -1
SYSTEM_TICK_STREAM_ID = "__tick"
TICK_FIELDS = ("rate_secs",)  # its one value: the tick period in seconds

if TYPE_CHECKING:
    from squall.coordination import SourceCoordination
    from squall.topology import ComponentSpec, InputsArg


class _TupleFields(NamedTuple):
    source_component: str
    source_task: int
    stream: str
    fields: tuple[str, ...]
    values: tuple[Any, ...]
    roots: tuple[int, ...] = ()  # acking: the trees this tuple belongs to ...
    root_ids: tuple[int, ...] = ()  # ... and its id in each, in the same order


NO_IDS: Mapping[int, int] = MappingProxyType({})


class Tuple(_TupleFields):
    """One tuple as a bolt sees it: where it came from and its values by declared field.

    Made once per tuple a bolt takes, so it is a NamedTuple underneath (a frozen dataclass's
    __init__ cost several times as much), but it behaves as the tuple of its `values`:
    indexing (by position or field name), iteration, len and unpacking see the values, and
    equality and hashing ignore the acking ids, as before. The acking map (root -> id) is
    kept as the two tuples it travels as, `roots` and `root_ids`, and made a dict only when
    `ids` is read: without a dict per tuple (and a tuple of its keys per input) the compiled
    per-tuple path ran a fifth faster (bench/RESULTS.md, "acking map as two tuples")."""

    __slots__ = ()

    def __new__(
        cls,
        source_component: str,
        source_task: int,
        stream: str,
        fields: tuple[str, ...],
        values: tuple[Any, ...],
        ids: Mapping[int, int] = NO_IDS,
    ) -> Tuple:
        head = (source_component, source_task, stream, fields, values)
        return tuple.__new__(cls, (*head, tuple(ids), tuple(ids.values())))

    @property
    def ids(self) -> Mapping[int, int]:
        """The acking map: root -> this tuple's id in the root's tree."""
        return dict(zip(self.roots, self.root_ids, strict=True)) if self.roots else NO_IDS

    def __getitem__(self, key: int | str) -> Any:  # type: ignore[override]
        if isinstance(key, str):
            return self.values[self.fields.index(key)]
        return self.values[key]

    def __iter__(self) -> Iterator[Any]:  # type: ignore[override]
        return iter(self.values)

    def __len__(self) -> int:
        return len(self.values)

    def __reduce__(self) -> tuple[Any, ...]:  # pickling sees the six fields, not the values
        head = _HEAD(self)
        return (Tuple, (*head, dict(self.ids)))

    def __eq__(self, other: object) -> bool:
        return type(other) is Tuple and _HEAD(self) == _HEAD(other)  # type: ignore[arg-type]

    def __ne__(self, other: object) -> bool:
        return not self.__eq__(other)

    def __hash__(self) -> int:
        return hash(_HEAD(self))

    def __repr__(self) -> str:
        head = ", ".join(f"{n}={getattr(self, n)!r}" for n in _TupleFields._fields[:5])
        return f"Tuple({head})"


def _HEAD(t: tuple) -> tuple:  # noqa: N802 - the compared part: everything but the ids
    return tuple.__getitem__(t, _COMPARED)


_COMPARED = slice(0, 5)


@dataclass(frozen=True)
class Batch:
    """Tuples that travel together as one Arrow table (columns: the stream's fields) and form
    one node of the acking tree, like a Trident batch: a bolt acks or fails it whole."""

    source_component: str
    source_task: int
    stream: str
    fields: tuple[str, ...]
    table: Any  # pyarrow.Table
    ids: Mapping[int, int] = field(default_factory=dict, compare=False, repr=False)  # acking

    def __len__(self) -> int:
        return self.table.num_rows

    @property
    def roots(self) -> tuple[int, ...]:  # the acking map as a Tuple keeps it
        return tuple(self.ids)

    @property
    def root_ids(self) -> tuple[int, ...]:
        return tuple(self.ids.values())

    @classmethod
    def of(cls, tup: Tuple) -> Batch:
        """A single tuple as a one-row batch."""
        import pyarrow as pa

        table = pa.table({f: [v] for f, v in zip(tup.fields, tup.values, strict=True)})
        return cls(tup.source_component, tup.source_task, tup.stream, tup.fields, table, tup.ids)

    def tuples(self) -> Iterator[Tuple]:
        columns = [self.table.column(i).to_pylist() for i in range(len(self.fields))]
        head = (self.source_component, self.source_task, self.stream, self.fields)
        anchors = (self.roots, self.root_ids)
        for values in zip(*columns, strict=True):
            yield tuple.__new__(Tuple, (*head, values, *anchors))


def is_tick(tup: Tuple | Batch) -> bool:
    """Whether `tup` is a tick tuple (Storm's TupleUtils.isTick, pystorm's is_tick)."""
    return tup.source_component == SYSTEM_COMPONENT_ID and tup.stream == SYSTEM_TICK_STREAM_ID


def tuples_of(item: Tuple | Batch) -> Iterator[Tuple]:
    """The tuples a bolt sees of an input, whether it came alone or in a batch."""
    return item.tuples() if isinstance(item, Batch) else iter((item,))


@dataclass(frozen=True)
class TaskContext:
    """What a task knows about its place in the running topology. `coordination` is how
    components that share work coordinate (partitioned sources own partitions and store
    offsets through it): backed by ZooKeeper in a worker, in memory in one process."""

    topology_id: str
    component_id: str
    task_id: int
    component_tasks: tuple[int, ...]
    output_dir: str
    coordination: SourceCoordination | None = field(default=None, compare=False, repr=False)
    # every task of the topology and its component (Storm's task->component), when known
    task_components: dict[int, str] = field(default_factory=dict, compare=False, repr=False)

    @property
    def task_index(self) -> int:
        return self.component_tasks.index(self.task_id)


class Collector(Protocol):
    """Where a component's emits go: the worker's executor for its task. `emit` answers the
    tasks the tuple went to (Storm's emit; a shell component's need_task_ids)."""

    def emit(
        self, values: list[Any], stream: str, direct_task: int | None, msg_id: Any
    ) -> list[int]: ...  # pragma: no cover

    def emit_batch(
        self, columns: Any, stream: str, direct_task: int | None, msg_id: Any
    ) -> None: ...  # pragma: no cover


class Component:
    """Base of spouts and bolts. `outputs` declares the default stream's fields, or a mapping
    of stream id to fields."""

    outputs: ClassVar[list[str] | dict[str, list[str]]] = []
    # True for a component that blocks in its calls (sleeps, waits on I/O or a subprocess):
    # its task then keeps a thread of its own instead of taking turns with the worker's
    # other tasks on one thread (topology.worker.shared.thread)
    own_thread: ClassVar[bool] = False
    collector: Collector

    def __init__(self, **kwargs: Any) -> None:
        self.kwargs = kwargs

    @classmethod
    def spec(
        cls,
        name: str | None = None,
        inputs: InputsArg = None,
        par: int = 1,
        config: dict[str, Any] | None = None,
        **kwargs: Any,
    ) -> ComponentSpec:
        """Declare this component in a Topology; `kwargs` reach `__init__` in the worker."""
        from squall.topology import ComponentSpec

        return ComponentSpec.create(cls, name, inputs, par, config, kwargs)

    @classmethod
    def output_streams(cls) -> dict[str, list[str]]:
        if isinstance(cls.outputs, dict):
            return {stream: list(fields) for stream, fields in cls.outputs.items()}
        return {DEFAULT_STREAM: list(cls.outputs)} if cls.outputs else {}

    def initialize(self, conf: dict[str, Any], context: TaskContext) -> None:
        """Called once in the worker before any tuple; open files and connections here."""

    def cleanup(self) -> None:
        """Called once when the task stops gracefully (kill, rebalance, shutdown)."""

    def emit(
        self, values: list[Any], stream: str = DEFAULT_STREAM, direct_task: int | None = None
    ) -> list[int]:
        """Emit one tuple; returns the task ids it was sent to (Storm's emit does)."""
        return self.collector.emit(values, stream, direct_task, None)

    def emit_batch(
        self, columns: Any, stream: str = DEFAULT_STREAM, direct_task: int | None = None
    ) -> None:
        """Emit many tuples at once: a pyarrow Table or RecordBatch, or a dict of field ->
        list, with the stream's fields as columns. The batch crosses workers as one Arrow
        record batch and a SparkBolt hands it to Spark without building Python tuples, so this
        is the fast path for volume. Shuffle groupings send a batch whole to one task; fields
        grouping splits it by key."""
        self.collector.emit_batch(columns, stream, direct_task, None)


class Spout(Component):
    """A source of tuples. `next_tuple` emits zero or more tuples and returns whether it
    emitted anything; a spout that returns False is idle (the worker backs off).

    A tuple emitted with a `msg_id` is tracked: `ack(msg_id)` is called once every tuple
    derived from it was processed, `fail(msg_id)` if any failed or the tree did not finish
    within topology.message.timeout.secs. Replay by emitting it again. At most
    topology.max.spout.pending tracked tuples are in flight per spout task."""

    def next_tuple(self) -> bool:  # pragma: no cover - abstract
        raise NotImplementedError

    def emit(
        self,
        values: list[Any],
        stream: str = DEFAULT_STREAM,
        direct_task: int | None = None,
        msg_id: Any = None,
    ) -> list[int]:
        return self.collector.emit(values, stream, direct_task, msg_id)

    def emit_batch(
        self,
        columns: Any,
        stream: str = DEFAULT_STREAM,
        direct_task: int | None = None,
        msg_id: Any = None,
    ) -> None:
        """Like `Component.emit_batch`; with a `msg_id` the whole batch is one tracked tuple:
        acked once every row and everything derived from it was processed, failed (and to be
        replayed whole) otherwise. max.spout.pending then counts batches, as in Trident."""
        self.collector.emit_batch(columns, stream, direct_task, msg_id)

    def ack(self, msg_id: Any) -> None:
        """The tuple tree of `msg_id` was fully processed."""

    def fail(self, msg_id: Any) -> None:
        """The tuple tree of `msg_id` failed or timed out; emit it again to replay it."""


class Bolt(Component):
    """A plain-Python processing step: `process` is called once per input tuple.

    A bolt that overrides `process_table` gets each batch whole, to work on its columns with
    pyarrow.compute (the vectorized path, for volume); a single tuple then comes as a
    one-row Batch unless the bolt defines `process` too. Either way what is emitted
    meanwhile is anchored to that input, which is acked when the call returns and failed
    when it raises."""

    def process(self, tup: Tuple) -> None:
        """One input tuple; by default, for a bolt that only defines `process_table`, a
        one-row Batch of it."""
        if type(self).process_table is Bolt.process_table:
            raise NotImplementedError(
                f"{type(self).__name__} defines neither process nor process_table"
            )
        self.process_table(Batch.of(tup))

    def process_table(self, batch: Batch) -> None:
        """A batch of input tuples, `batch.table` (columns: the input stream's fields); by
        default each row goes to `process`."""
        for tup in batch.tuples():
            self.process(tup)

    def process_tick(self, tup: Tuple) -> None:
        """A tick tuple (`is_tick(tup)`: component `__system`, task -1, stream `__tick`, its
        one value the period), every topology.tick.tuple.freq.secs seconds when that is set
        in the topology's or this component's conf. By default it goes to `process`, as Storm
        delivers it to `execute`; override this to handle ticks apart (pystorm's name). It is
        not anchored: what is emitted meanwhile is untracked, and it is never acked or
        failed, nor counted as executed; an exception is reported as an error."""
        self.process(tup)

    def idle(self) -> None:
        """Called whenever the bolt has drained its input, before the last tuple counts as
        executed: a sink that buffers output writes it here."""


class SparkBolt(Bolt):
    """A processing step that runs as PySpark jobs: input tuples are gathered into
    micro-batches (topology.batch.size / topology.batch.timeout.ms), each batch becomes a
    DataFrame whose columns are the input stream's fields, and the rows of the DataFrame
    `process_batch` returns are emitted on the default stream.

    A tick tuple (topology.tick.tuple.freq.secs) first runs the micro-batch gathered so far,
    whatever its size and age, then reaches `process_tick`, which does nothing by default."""

    def process_tick(self, tup: Tuple) -> None:
        """A tick, after the pending micro-batch ran; nothing by default."""

    def process_batch(self, df: Any) -> Any:  # pragma: no cover - abstract
        raise NotImplementedError
