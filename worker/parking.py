"""The receive side of backpressure between workers: whoever takes in what arrived (the
transport's receive thread, or the worker's shared thread) never blocks on a task's queue,
so data for a task whose queue is full is parked here, in arrival order, and handed over
once the task has room; meanwhile (and while any local queue is full) the worker's congested
tasks are to be told to its peers (`congested`; when: backpressure.StatusSchedule). Used by
that one thread only."""

from __future__ import annotations

from collections.abc import Callable, Iterable

from .acking import PROTOCOL_TYPES, SYSTEM_STREAMS
from .backpressure import congested_tasks
from .delivery import Delivery

_PROTOCOL = frozenset(PROTOCOL_TYPES)


class Parking:
    def __init__(
        self,
        deliver: Callable[[list[Delivery]], None],
        full: Callable[[int], bool],
    ) -> None:
        self.deliver = deliver
        self.full = full
        self.parked: dict[int, list[Delivery]] = {}

    def arrived(self, deliveries: list[Delivery]) -> None:
        """Deliver what arrived; data for a full (or already parked) task is parked. Protocol
        messages are never held. Whether a task is full is asked once per task and frame
        (nothing arriving here fills a queue before `deliver` at the end)."""
        held = self.held({d[0] for d in deliveries})
        if not held:  # the usual case: no task of this frame is full
            self.deliver(deliveries)
            return
        now: list[Delivery] = []
        for d in deliveries:
            if d[0] in held and type(d) not in _PROTOCOL and d.stream not in SYSTEM_STREAMS:
                self.parked.setdefault(d[0], []).append(d)
            else:
                now.append(d)
        if now:
            self.deliver(now)

    def held(self, targets: Iterable[int]) -> set[int]:
        """Of `targets`, the tasks whose data waits here or whose queue is full."""
        return {t for t in targets if t in self.parked or self.full(t)}

    def retry(self) -> None:
        """Hand over the parked deliveries of every task that has room again."""
        for task in [t for t in self.parked if not self.full(t)]:
            self.deliver(self.parked.pop(task))

    def congested(self, local: Iterable[int]) -> frozenset[int]:
        """This worker's congested tasks (of `local`, its tasks): full or with data parked."""
        return congested_tasks([t for t in local if self.full(t)], self.parked)
