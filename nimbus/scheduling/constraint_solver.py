"""Storm's ConstraintSolverStrategy (topology.scheduler.strategy): a resource-aware placement
that also keeps incompatible components out of one worker and caps how many tasks of a
component one supervisor runs, found by a bounded backtracking search. Pure.

Constraints, read as Storm's ConstraintSolverConfig reads them:
- topology.ras.constraints, old style: [[comp-a, comp-b], ...] pairs that may not share a
  worker; new style: {comp: {incompatibleComponents: [..] or "one", maxNodeCoLocationCnt: n}}.
  Incompatibility goes both ways. Unknown components and malformed entries are ignored,
  as Storm ignores them (with a warning there).
- topology.spread.components: [comp, ...] at most one task of each per supervisor, unless
  maxNodeCoLocationCnt already set one.
- topology.ras.constraint.max.state.search: the search gives up after this many tries (10,000).

Search. Tasks go most constrained component first (Storm's ExecSorterByConstraintSeverity:
the most incompatibilities, then a per-supervisor cap, then the biggest); each task tries the
topology's used workers (fullest first), then one empty slot per supervisor (empty slots of one
supervisor are alike, so trying one is enough), in slot order; a task that fits nowhere sends
the search back to the task before it. Resources are checked as nimbus/scheduling/resource_fit.py
checks them (worker heap, supervisor memory, CPU with the worker floor).
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Mapping, Sequence
from typing import Any

from squall.nimbus.scheduling.resource_fit import EPSILON, Fit, cpu_added
from squall.nimbus.scheduling.scheduler import interleave_slots
from squall.nimbus.scheduling.scheduling_input import (
    DEFAULT_MAX_STATES,
    UNBOUNDED,
    Constraints,
    TopologyRequest,
)
from squall.records import Slot

RAS_CONSTRAINTS = "topology.ras.constraints"
SPREAD = "topology.spread.components"
MAX_STATES = "topology.ras.constraint.max.state.search"


def constraints_of(conf: Mapping[str, Any], components: Sequence[str]) -> Constraints:
    """The constraints `conf` sets on `components`, as Storm's ConstraintSolverConfig."""
    known = set(components)
    incompatible: dict[str, set[str]] = {c: set() for c in known}
    per_node: dict[str, int] = {}

    def pair(a: Any, b: Any) -> None:
        if a in known and b in known:
            incompatible[a].add(b)
            incompatible[b].add(a)

    raw = conf.get(RAS_CONSTRAINTS)
    if isinstance(raw, list):
        for entry in raw:
            if isinstance(entry, list) and len(entry) >= 2:
                pair(entry[0], entry[1])
    elif isinstance(raw, Mapping):
        for comp, rules in raw.items():
            if comp not in known or not isinstance(rules, Mapping):
                continue
            others = rules.get("incompatibleComponents", [])
            for other in [others] if isinstance(others, str) else others or []:
                pair(comp, other)
            count = _whole(rules.get("maxNodeCoLocationCnt"))
            if count is not None and count >= 1:
                per_node[comp] = count
    spread = conf.get(SPREAD)
    if isinstance(spread, list):
        for comp in spread:
            if comp in known:
                per_node.setdefault(comp, 1)
    states = _whole(conf.get(MAX_STATES))
    return Constraints(
        {c: frozenset(o) for c, o in sorted(incompatible.items()) if o},
        per_node,
        states if states is not None and states >= 1 else DEFAULT_MAX_STATES,
    )


def _whole(value: Any) -> int | None:
    """Storm parses maxNodeCoLocationCnt with Integer.parseInt("" + value)."""
    if isinstance(value, bool):
        return None
    try:
        return int(str(value).replace("_", ""))
    except ValueError:
        return None


class _State:
    """The search's bookkeeping: what each host has free, each worker holds, each host runs."""

    def __init__(
        self,
        request: TopologyRequest,
        kept: Mapping[int, Slot],
        free: Mapping[str, tuple[float, float]],
        floor: float,
    ) -> None:
        self.request, self.floor = request, floor
        self.room = {host: list(v) for host, v in free.items()}
        self.heap: dict[Slot, float] = {}
        self.cpu: dict[Slot, float] = {}
        self.comps: dict[Slot, Counter[str]] = {}
        self.on_node: Counter[tuple[str, str]] = Counter()
        for task, slot in kept.items():
            self._add(task, slot, charge=False)

    def _add(self, task: int, slot: Slot, charge: bool = True) -> None:
        mem, cpu = self.request.need(task)
        if charge:
            self.room[slot[0]][0] -= mem
            self.room[slot[0]][1] -= cpu_added(self.cpu.get(slot), cpu, self.floor)
        self.heap[slot] = self.heap.get(slot, 0.0) + mem
        self.cpu[slot] = self.cpu.get(slot, 0.0) + cpu
        self.comps.setdefault(slot, Counter())[self.request.tasks[task]] += 1
        self.on_node[(slot[0], self.request.tasks[task])] += 1

    def add(self, task: int, slot: Slot) -> None:
        self._add(task, slot)

    def remove(self, task: int, slot: Slot) -> None:
        mem, cpu = self.request.need(task)
        component = self.request.tasks[task]
        self.heap[slot] -= mem
        self.cpu[slot] -= cpu
        self.comps[slot][component] -= 1
        self.on_node[(slot[0], component)] -= 1
        if not +self.comps[slot]:  # the worker is empty again: it no longer exists
            del self.comps[slot], self.heap[slot]
            after = None
            cpu_back = max(cpu + self.cpu.pop(slot), self.floor)
        else:
            after = self.cpu[slot]
            cpu_back = cpu_added(after, cpu, self.floor)
        self.room[slot[0]][0] += mem
        self.room[slot[0]][1] += cpu_back

    def fits(self, task: int, slot: Slot, rules: Constraints) -> bool:
        mem, cpu = self.request.need(task)
        component = self.request.tasks[task]
        host = self.room[slot[0]]
        if self.heap.get(slot, 0.0) + mem > self.request.worker_heap_mb + EPSILON:
            return False
        if host[0] + EPSILON < mem or host[1] + EPSILON < cpu_added(
            self.cpu.get(slot), cpu, self.floor
        ):
            return False
        cap = rules.max_per_node.get(component)
        if cap is not None and self.on_node[(slot[0], component)] >= cap:
            return False
        bad = rules.incompatible.get(component, frozenset())
        held = self.comps.get(slot)
        return not (held and any(held[c] > 0 for c in bad))


def solve(
    request: TopologyRequest,
    candidates: list[Slot],
    kept: Mapping[int, Slot],
    free: Mapping[str, tuple[float, float]],
    floor: float,
    rules: Constraints,
) -> Fit:
    """`request` placed on `candidates` under `rules`; `kept` tasks stay (already charged
    in `free`). All tasks or none, as resource_fit.place."""
    ordered = interleave_slots(candidates)
    order = {slot: i for i, slot in enumerate(ordered)}
    state = _State(request, kept, free, floor)
    placement = dict(kept)

    def severity(task: int) -> tuple:
        component = request.tasks[task]
        mem, cpu = request.need(task)
        incompatible = len(rules.incompatible.get(component, ()))
        capped = component in rules.max_per_node
        return (-incompatible, not capped, -mem, -cpu, component, task)

    movers = sorted((t for t in request.tasks if t not in kept), key=severity)

    def options(task: int) -> list[Slot]:
        used = sorted(state.comps, key=lambda s: (-state.heap[s], order.get(s, len(order))))
        tried = [s for s in used if s in order and state.fits(task, s, rules)]
        if len(state.comps) < request.max_workers or request.max_workers >= UNBOUNDED:
            hosts: set[str] = set()
            for slot in ordered:
                if slot in state.comps or slot[0] in hosts:
                    continue
                hosts.add(slot[0])  # one empty slot per supervisor: the others are alike
                if state.fits(task, slot, rules):
                    tried.append(slot)
        return tried

    stack: list[tuple[list[Slot], int]] = []
    states = 0
    i = 0
    while i < len(movers):
        task = movers[i]
        if len(stack) == i:
            stack.append((options(task), 0))
        choices, tried = stack[i]
        if tried > 0:  # back from a dead end below: undo this level's last choice
            state.remove(task, choices[tried - 1])
            del placement[task]
        if tried >= len(choices):
            stack.pop()
            i -= 1
            if i < 0:
                return Fit(None, _frozen(state), _unsolvable(request, rules, states))
            continue
        if states >= rules.max_states:
            return Fit(None, _frozen(state), _gave_up(request, rules))
        states += 1
        stack[i] = (choices, tried + 1)
        state.add(task, choices[tried])
        placement[task] = choices[tried]
        i += 1
    return Fit(placement, _frozen(state))


def _frozen(state: _State) -> dict[str, tuple[float, float]]:
    return {host: (v[0], v[1]) for host, v in state.room.items()}


def _unsolvable(request: TopologyRequest, rules: Constraints, states: int) -> str:
    return (
        f"Not enough resources to schedule: no placement of {request.id} meets its "
        f"constraints (topology.ras.constraints, topology.spread.components) on the free "
        f"slots; {states} states searched"
    )


def _gave_up(request: TopologyRequest, rules: Constraints) -> str:
    return (
        f"Not enough resources to schedule: the constraint solver gave up after "
        f"{rules.max_states} states (topology.ras.constraint.max.state.search)"
    )
