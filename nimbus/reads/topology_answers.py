"""What the handler's own reads and the UI reads (ui_reads.py) answer alike: an answer
marked stale while ZooKeeper is unreachable, a topology's run status (why its tasks do not
run) and its TopologyInfo. Given to both as one object, so each call group names what it
reads from instead of reaching into the handler.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import Any, TypeVar

from squall.nimbus.controller import Controller
from squall.nimbus.core.model import NimbusModel, TopologyModel
from squall.nimbus.reads import summaries
from squall.nimbus.reads.run_state import (
    NIMBUS,
    has_unplaced,
    recent_error,
    refusal_cause,
    run_count,
    run_status,
)

R = TypeVar("R")

# seconds a refused certificate stays a possible cause (supervisors retry each
# supervisor.heartbeat.frequency.secs; the refusal log notes each one)
REFUSAL_WITHIN_SECS = 120.0

# (now, within) -> the server's (peer, reason) of recently refused certificates
RefusedCertificates = Callable[[float, float], list[tuple[str, str]]]


def no_refusals(now: float, within: float) -> list[tuple[str, str]]:
    """A server that refused no certificate (one without TLS, a test's)."""
    return []


class TopologyAnswers:
    def __init__(
        self,
        controller: Controller,
        host: str,
        port: int,
        refused_certificates: RefusedCertificates,
    ):
        """`host` and `port`: this nimbus's, which its own errors are reported from;
        `refused_certificates`: the server's (nimbus/rpc/tls_refusal.py)."""
        self.c = controller
        self.host = host
        self.port = port
        self.refused_certificates = refused_certificates

    def stamped(self, answer: R) -> R:
        """`answer` marked stale while ZooKeeper is unreachable (nimbus/reads/last_known.py):
        since when, and why."""
        stale = self.c.reads.stale()
        if stale is not None:
            answer.stale_since = stale.since  # type: ignore[attr-defined]
            answer.stale_cause = stale.cause  # type: ignore[attr-defined]
        return answer

    def run_status(self, model: NimbusModel, topology: TopologyModel, errors: Any = None) -> str:
        """The scheduler's status, and whether the tasks run (nimbus/reads/run_state.py): the
        latest error is read only for a topology with tasks not running, unless the caller
        read its `errors` already. A standby keeps no heartbeats: it says only what the
        scheduler said."""
        if not model.leading:
            return topology.sched_status
        settings = model.settings
        count = run_count(topology, self.c.clock(), settings.task_timeout, settings.task_launch)
        if errors is None:
            errors = self.c.reads.read_errors(topology.id) if count.down or count.starting else {}
        last = recent_error(self._with_nimbus_word(topology, errors), count, self.c.wall())
        return run_status(topology.sched_status, count, last, topology.base.status)

    def _with_nimbus_word(self, topology: Any, errors: dict[str, list]) -> dict[str, list]:
        """`errors` and, for a topology with tasks placed nowhere while nimbus has refused a
        certificate, that refusal as nimbus's error of the topology (reaches get-errors)."""
        if NIMBUS in errors or not has_unplaced(topology):
            return errors
        refused = self.refused_certificates(time.monotonic(), REFUSAL_WITHIN_SECS)
        cause = refusal_cause(refused)
        if cause is None:
            return errors
        entry = {"error": cause, "time_secs": int(self.c.wall()), "host": self.host}
        return {**errors, NIMBUS: [{**entry, "port": self.port}]}

    def topology_info(self, topology: TopologyModel, model: NimbusModel) -> Any:
        """Storm's TopologyInfo (not stamped)."""
        # once, for the status and the info
        errors = self._with_nimbus_word(topology, self.c.reads.read_errors(topology.id))
        return summaries.topology_info(
            topology.id,
            topology.base,
            topology.assignment,
            topology.tasks,
            self.c.reads.read_beats(topology.id),
            errors,
            self.c.wall(),
            spouts=self.c.code.structure(topology.id).spouts(),
            sched_status=self.run_status(model, topology, errors),
            sole_inputs=self._sole_inputs(topology.id),
        )

    def _sole_inputs(self, tid: str) -> dict[str, tuple[str, str]]:
        """Each bolt with one input stream: its (component, stream), which its per-stream
        figures are reported under."""
        components = self.c.code.structure(tid).components
        return {
            name: (c.inputs[0].component, c.inputs[0].stream)
            for name, c in components.items()
            if len({(i.component, i.stream) for i in c.inputs}) == 1
        }
