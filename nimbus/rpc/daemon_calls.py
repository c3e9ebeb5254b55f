"""Storm 2's daemon-internal calls (getSupervisorAssignments, sendSupervisorWorkerHeartbeats,
sendSupervisorWorkerHeartbeat, processWorkerMetrics), served for the NimbusHandler.

Storm 2's supervisors fetch assignments and send worker heartbeats and metrics over Thrift;
squall's supervisors and workers do all of that through ZooKeeper, so nimbus serves none of
them. A caller is first authorized exactly as Storm's SimpleACLAuthorizer authorizes it (the
first three are supervisor commands, sendSupervisorWorkerHeartbeat a topology command on the
heartbeat's topology, NotAliveException when there is none): a user gets Storm's
AuthorizationException. Whoever passes (an admin, a nimbus.supervisor.users identity) gets an
UNKNOWN_METHOD TApplicationException naming the call and why, never a made-up answer.
"""

from __future__ import annotations

from typing import Any

from thriftpy2.thrift import TApplicationException

from squall.nimbus.rpc.call_authorizer import CallAuthorizer
from squall.nimbus.rpc.operations import op


def not_served(call: str) -> TApplicationException:
    return TApplicationException(
        TApplicationException.UNKNOWN_METHOD,
        f"{call}: not served; squall's supervisors and workers report through ZooKeeper",
    )


def _heartbeat_topology(heartbeat: Any) -> str:
    return str(getattr(heartbeat, "storm_id", None) or "")


class DaemonCalls:
    CALLS = (
        "getSupervisorAssignments",
        "sendSupervisorWorkerHeartbeats",
        "sendSupervisorWorkerHeartbeat",
        "processWorkerMetrics",
    )

    def __init__(self, auth: CallAuthorizer):
        self._authorize = auth.authorize  # operations.op judges each call by it

    @op("getSupervisorAssignments")
    def getSupervisorAssignments(self, node):
        raise not_served("getSupervisorAssignments")

    @op("sendSupervisorWorkerHeartbeats")
    def sendSupervisorWorkerHeartbeats(self, heartbeats):
        raise not_served("sendSupervisorWorkerHeartbeats")

    @op("sendSupervisorWorkerHeartbeat", topology=_heartbeat_topology)
    def sendSupervisorWorkerHeartbeat(self, heatbeat):  # Storm's argument name
        raise not_served("sendSupervisorWorkerHeartbeat")

    @op("processWorkerMetrics")
    def processWorkerMetrics(self, metrics):
        raise not_served("processWorkerMetrics")
