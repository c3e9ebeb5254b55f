"""Whether the caller of a Thrift call may make it: one object that the handler and every
call group (blob_calls, credential_calls, ui_reads, ...) are given, so that all of nimbus's
Thrift calls are judged by one nimbus.authorizer, one ACL and one group cache.

The caller's identity is request_context's (bound by the server from the TLS peer
certificate); the operation is Storm's name for it (operations.op names it on each call).
"""

from __future__ import annotations

import logging
import time
from collections.abc import Callable, Mapping
from typing import Any

from squall import thrift_api as T
from squall.nimbus.core.model import NimbusModel
from squall.nimbus.rpc import request_context
from squall.nimbus.rpc.authorizer import NOOP, Acl, UnixGroups, authorizer_kind, decide, denial

log = logging.getLogger("squall.nimbus.rpc.handler")


class CallAuthorizer:
    def __init__(
        self,
        conf: Mapping[str, Any],
        read_model: Callable[[], NimbusModel],
        stored_conf: Callable[[str], dict[str, Any]],
    ):
        """`read_model`: the controller's published model; `stored_conf`: a topology's conf
        as its code package holds it (for a topology whose model has none yet)."""
        self.kind = authorizer_kind(conf)
        self.acl = Acl.from_conf(conf)
        cache_secs = conf["storm.group.mapping.service.cache.duration.secs"]
        self.groups = UnixGroups(cache_secs, time.monotonic)
        self._read_model = read_model
        self._stored_conf = stored_conf

    @property
    def enforcing(self) -> bool:
        """False in open mode (no nimbus.authorizer): every call is allowed."""
        return self.kind != NOOP

    def authorize(self, operation: str, topology: str | None) -> str | None:
        """Judge the call; the id of the topology it was judged on (`topology` is a name
        or an id), which the call then acts on: by its name, the controller would find
        whichever topology has that name when the job runs, a new one of the same name
        resubmitted meanwhile by someone else. None when nothing is judged."""
        if not self.enforcing:
            return None
        ctx = request_context.current()
        tid, topology_conf = None, None
        if topology is not None:
            tid = self._read_model().find(topology).id  # NotAliveException: none
            topology_conf = self.topology_conf(tid)
        groups = self.groups(ctx.principal) if ctx.principal is not None else frozenset()
        if decide(self.kind, self.acl, ctx.principal, groups, operation, topology_conf):
            return tid
        message = denial(ctx.principal, operation, topology)
        log.warning("denied: %s (from %s)", message, ctx.address)
        raise T.AuthorizationException(msg=message)

    def topology_conf(self, name_or_id: str) -> dict[str, Any]:
        """The conf a topology operation is judged by (NotAliveException when there is no
        such topology)."""
        topology = self._read_model().find(name_or_id)
        return dict(topology.conf) or self._stored_conf(topology.id)

    def may(self, principal: str | None, operation: str, conf: Mapping[str, Any]) -> bool:
        """Whether `principal` may do the topology `operation` on a topology with `conf`
        (a filter, never an error)."""
        groups = self.groups(principal) if principal is not None else frozenset()
        return decide(self.kind, self.acl, principal, groups, operation, conf)
