"""Storm's setWorkerProfiler and getComponentPendingProfileActions, served for the NimbusHandler.

Requests are checked and shaped in squall.profile_requests and stored in ZooKeeper under the
topology, as Storm stores them (/profilerconfig/<topology-id>/<host>_<port>_<action>); the
worker a request names carries it out and deletes it (worker/profiler_actions.py). Garbage
requests (GRACE_MS past their time) are dropped whenever a request is stored, so nothing
needs a timer.

Authorized as Storm's SimpleACLAuthorizer does: setWorkerProfiler is a topology command,
getComponentPendingProfileActions a topology read. Storm's IDL declares no exceptions on
either, so an unknown topology, a bad request or a standby reach a Storm client as a
TApplicationException naming the refusal (thrift_call.undeclared_message). Only the leader
stores requests; its writes are fenced by its epoch like every other.
"""

from __future__ import annotations

import functools
import logging
from typing import Any

from kazoo.exceptions import KazooException, NoNodeError

from squall import profile_requests as pr
from squall import thrift_api as T
from squall.nimbus.controller import Controller
from squall.nimbus.rpc.call_authorizer import CallAuthorizer
from squall.nimbus.rpc.operations import op
from squall.validation import invalid

log = logging.getLogger("squall.nimbus.rpc.handler")


def to_thrift(r: pr.ProfileRequest) -> Any:
    return T.ProfileRequest(
        nodeInfo=T.NodeInfo(node=r.host, port={r.port}),
        action=pr.ACTIONS.index(r.action),
        time_stamp=r.time_stamp_ms,
    )


def component_slots(topology: Any, component: str) -> set[tuple[str, int]]:
    """(host, port) of every worker running one of `component`'s tasks."""
    assignment = topology.assignment
    if assignment is None:
        return set()
    return {
        (assignment.node_host.get(node, node), port)
        for task, (node, port) in assignment.task_slots.items()
        if topology.tasks.get(task) == component
    }


class ProfilerCalls:
    CALLS = ("setWorkerProfiler", "getComponentPendingProfileActions")

    def __init__(self, controller: Controller, auth: CallAuthorizer):
        self.c = controller
        self._authorize = auth.authorize  # operations.op judges each call by it

    def _stored_requests(self, topology_id: str) -> dict[str, pr.ProfileRequest]:
        """Every readable request under the topology, by node name (junk is logged, skipped)."""
        zk, directory = self.c.state.zk, self.c.state.layout.profilerconfig(topology_id)
        try:
            children = zk.get_children(directory)
        except NoNodeError:
            return {}
        out = {}
        for child in sorted(children):
            try:
                data, _ = zk.get(f"{directory}/{child}")
                out[child] = pr.decode(data, f"{directory}/{child}")
            except NoNodeError:
                continue  # its worker just did it
            except pr.ProfileRequestError as exc:
                log.warning("ignoring %s", exc)
        return out

    @op("setWorkerProfiler", topology=True, acts=True)
    def setWorkerProfiler(self, id, profileRequest):  # noqa: A002 - Storm's argument name
        topology = self.c.read_model().find(id)
        if not self.c.leading:
            raise self.c.not_leader()
        if profileRequest is None or profileRequest.nodeInfo is None:
            raise invalid("setWorkerProfiler: a profile request with nodeInfo is required")
        self.c.reads.require_zookeeper("setWorkerProfiler")
        now_ms = int(self.c.wall() * 1000)
        node = profileRequest.nodeInfo
        try:
            request = pr.request(
                node.node, node.port, profileRequest.action, profileRequest.time_stamp, now_ms
            )
        except pr.ProfileRequestError as exc:
            raise invalid(str(exc)) from exc
        state = self.c.state
        directory = state.layout.profilerconfig(topology.id)
        state.zk.ensure_path(directory)
        stored = self._stored_requests(topology.id)
        garbage = [n for n, r in stored.items() if pr.garbage(r, now_ms) and n != request.node]
        ops = [("delete", (f"{directory}/{n}",)) for n in garbage]
        if len(stored) - len(garbage) + (request.node not in stored) > pr.MAX_STORED:
            raise T.IllegalStateException(
                msg=f"setWorkerProfiler: {topology.id} has {pr.MAX_STORED} pending requests"
            )
        path = f"{directory}/{request.node}"
        for _ in range(3):  # a request stored or done meanwhile: look again
            # replaced by delete and create, never set_data: the worker watches the children
            replace = [("delete", (path,))] if state.zk.exists(path) else []
            try:
                state.commit([*ops, *replace, ("create", (path, pr.encode(request)))])
                break
            except KazooException:
                ops = []  # the garbage may be gone too; the next request drops it
        else:
            raise T.IllegalStateException(msg=f"setWorkerProfiler: {path} keeps changing")
        log.info("profile request %s for %s stored", request, topology.id)

    @op("getComponentPendingProfileActions", topology=True)
    def getComponentPendingProfileActions(self, id, component_id, action):  # noqa: A002
        topology = self.c.read_model().find(id)
        if action is None or not 0 <= action < len(pr.ACTIONS):
            raise invalid(f"getComponentPendingProfileActions: unknown profile action {action!r}")
        slots = component_slots(topology, component_id or "")
        now_ms = int(self.c.wall() * 1000)
        # during a ZooKeeper outage: what was last read, at once (it blocked until the end)
        read = functools.partial(self._stored_requests, topology.id)
        requests = self.c.reads.remembered(("profilerconfig", topology.id), read, {}).values()
        return [to_thrift(r) for r in pr.pending(requests, slots, pr.ACTIONS[action], now_ms)]
