"""Thrift method implementations. Writes become events decided on the controller thread;
reads answer from the controller's published (immutable) model; code uploads and downloads
go straight to the inbox and the code store, never through the controller's queue.

Declared Thrift exceptions pass through to the client; anything else is logged and answered
with a TApplicationException, so an internal error fails one call and never the connection
or the server.

The handler serves submit, kill and the other lifecycle calls, code uploads and downloads,
the cluster and topology reads and the leader itself; the other calls are served by call
groups it builds, each given what it reads and writes (the controller, the CallAuthorizer,
TopologyAnswers): blobs (nimbus/blobs/blob_calls.py), credentials, daemon calls, log levels
and debug, profiling (nimbus/rpc/*_calls.py) and the UI's reads (nimbus/reads/ui_reads.py).
Each group's CALLS are bound on the handler under their Thrift names, which is how the
server finds a call's method (thrift_call.run_call).

Every method is authorized first (`_op`, by nimbus/rpc/call_authorizer.py): the caller's
identity (request_context, bound by the server from the TLS peer certificate), Storm's
operation name and, for a topology operation, that topology's conf go to nimbus.authorizer;
a denial is an AuthorizationException naming the principal and the operation, and is
logged.
"""

from __future__ import annotations

import getpass
import json
import logging
import os
import time
from collections.abc import Callable
from typing import Any

from thriftpy2.thrift import TApplicationException

from squall import __version__
from squall import thrift_api as T
from squall.nimbus.blobs.blob_calls import BlobCalls
from squall.nimbus.controller import Controller
from squall.nimbus.reads import summaries
from squall.nimbus.reads.redaction import redacted
from squall.nimbus.reads.topology_answers import RefusedCertificates, TopologyAnswers, no_refusals
from squall.nimbus.reads.ui_reads import UiReads
from squall.nimbus.rpc import request_context
from squall.nimbus.rpc.authorizer import SUBMITTER_KEYS
from squall.nimbus.rpc.call_authorizer import CallAuthorizer
from squall.nimbus.rpc.credential_calls import CredentialCalls
from squall.nimbus.rpc.daemon_calls import DaemonCalls
from squall.nimbus.rpc.log_debug_calls import LogDebugCalls
from squall.nimbus.rpc.operations import op as _op
from squall.nimbus.rpc.profiler_calls import ProfilerCalls
from squall.nimbus.rpc.request_checks import conf_overrides
from squall.nimbus.scheduling.resource_conf import fragmentation_bar
from squall.storm_version import storm_compatible
from squall.structure import structure_to_thrift
from squall.validation import name_problem

log = logging.getLogger("squall.nimbus.rpc.handler")


def _with_submitter(json_conf: str | None, principal: str | None) -> str | None:
    """The topology conf with nimbus's record of who submitted it; whatever the client put
    under those keys is replaced. A conf that is not a JSON object is left for the
    controller to refuse with its own message. As in Storm's submitTopologyWithOpts, the
    submitter user (the topology's owner) is the principal, or with no identity (open mode)
    the OS user nimbus runs as; the submitter principal stays empty then."""
    try:
        conf = json.loads(json_conf or "{}")
    except (TypeError, ValueError, RecursionError):
        return json_conf
    if not isinstance(conf, dict):
        return json_conf
    principal_key, user_key = SUBMITTER_KEYS
    conf.update({principal_key: principal or "", user_key: principal or _OS_USER})
    return json.dumps(conf)


def _os_user() -> str:
    try:
        return getpass.getuser()
    except (KeyError, OSError):  # no name for this uid (a container's bare uid)
        return str(os.getuid())


_OS_USER = _os_user()
_STARTED = time.time()


# The call groups, each serving the Thrift calls its CALLS name; NimbusHandler's own
# methods serve the rest.
CALL_GROUPS = (BlobCalls, CredentialCalls, DaemonCalls, LogDebugCalls, ProfilerCalls, UiReads)


class NimbusHandler:
    def __init__(
        self,
        controller: Controller,
        conf: dict[str, Any],
        host: str,
        port: int,
        leader_of: Callable[[], str | None],
        refused_certificates: RefusedCertificates = no_refusals,
    ):
        """`refused_certificates`: the server's record of refused TLS peers, a possible cause
        of tasks placed nowhere."""
        self.c = controller
        self.conf = conf
        self.host = host
        self.port = port
        self.leader_of = leader_of
        self.auth = CallAuthorizer(conf, controller.read_model, controller.code.conf)
        self._authorize = self.auth.authorize  # operations.op judges each call by it
        self.answers = TopologyAnswers(controller, host, port, refused_certificates)
        self.blobs = BlobCalls(controller, conf, self.auth)
        self.credentials = CredentialCalls(controller, self.auth)
        self.daemon_calls = DaemonCalls(self.auth)
        self.log_debug = LogDebugCalls(controller, self.auth)
        self.profiler = ProfilerCalls(controller, self.auth)
        self.ui = UiReads(controller, self.auth, self.answers)
        groups = (
            self.blobs,
            self.credentials,
            self.daemon_calls,
            self.log_debug,
            self.profiler,
            self.ui,
        )
        assert tuple(map(type, groups)) == CALL_GROUPS  # which the unit tests check
        for group in groups:
            for call in group.CALLS:
                setattr(self, call, getattr(group, call))

    @_op("submitTopology")
    def submitTopology(self, name, uploadedJarLocation, jsonConf, topology):
        self.submitTopologyWithOpts(name, uploadedJarLocation, jsonConf, topology, None)

    @_op("submitTopology")
    def submitTopologyWithOpts(self, name, uploadedJarLocation, jsonConf, topology, options):
        # before anything else: a refused submit discards its upload, never another's
        self.c.inbox.check_owner(uploadedJarLocation, request_context.current().principal)
        status = options.initial_status if options else T.TopologyInitialStatus.ACTIVE
        principal = request_context.current().principal
        creds = options.creds if options else None  # Storm's credentials at submit
        upload = self.credentials.checked_submit(creds, principal) if creds else None
        json_conf = _with_submitter(jsonConf, principal)
        tid = self.c.requests.submit(name, uploadedJarLocation, json_conf, topology, status)
        if upload:
            self.credentials.store(tid, upload, principal or "")

    @_op("killTopology", topology=True, acts=True)
    def killTopology(self, name):
        self.c.requests.kill(name, None)

    @_op("killTopology", topology=True, acts=True)
    def killTopologyWithOpts(self, name, options):
        self.c.requests.kill(name, options.wait_secs if options else None)

    @_op("activate", topology=True, acts=True)
    def activate(self, name):
        self.c.requests.activate(name)

    @_op("deactivate", topology=True, acts=True)
    def deactivate(self, name):
        self.c.requests.deactivate(name)

    @_op("rebalance", topology=True, acts=True)
    def rebalance(self, name, options):
        options = options or T.RebalanceOptions()
        wait, workers, executors = options.wait_secs, options.num_workers, options.num_executors
        conf = conf_overrides(options.topology_conf_overrides)
        resources = options.topology_resources_overrides or {}
        self.c.requests.rebalance(name, wait, workers, executors, conf, resources)

    @_op("fileUpload")
    def beginFileUpload(self):
        return self.c.requests.begin_upload(request_context.current().principal)

    @_op("fileUpload")
    def uploadChunk(self, location, chunk):
        principal = request_context.current().principal
        self.c.inbox.append(location, chunk, self.c.clock(), principal)

    @_op("fileUpload")
    def finishFileUpload(self, location):
        self.c.inbox.finish(location, self.c.clock(), request_context.current().principal)

    @_op("fileDownload")
    def beginFileDownload(self, file):
        return self.c.code.begin_download(file, self.c.clock())

    @_op("fileDownload")
    def downloadChunk(self, id):  # noqa: A002 - Storm's argument name
        return self.c.code.read_chunk(id, self.c.clock())

    @_op("getNimbusConf")
    def getNimbusConf(self):
        return json.dumps(redacted(self.conf))

    @_op("getClusterInfo")
    def getClusterInfo(self):
        model = self.c.read_model()
        topologies = model.topologies
        cluster = summaries.cluster_summary(
            {tid: t.base for tid, t in topologies.items()},
            {tid: t.assignment for tid, t in topologies.items() if t.assignment},
            {tid: t.tasks for tid, t in topologies.items()},
            model.supervisors,
            self._nimbuses(),
            self.c.wall(),
            {tid: self.answers.run_status(model, t) for tid, t in topologies.items()},
            model.blacklist.reasons(),
            fragmentation_bar(model.settings.scheduling),
        )
        for topology in cluster.topologies:
            self.answers.stamped(topology)
        return self.answers.stamped(cluster)

    @_op("getTopologyInfo", topology=True)
    def getTopologyInfo(self, id):  # noqa: A002
        model = self.c.read_model()
        return self.answers.stamped(self.answers.topology_info(model.find(id), model))

    @_op("getTopologyConf", topology=True)
    def getTopologyConf(self, id):  # noqa: A002
        topology = self.c.read_model().find(id)
        return json.dumps(dict(topology.conf) or self.c.code.conf(topology.id))

    @_op("getTopology", topology=True)
    def getTopology(self, id):  # noqa: A002
        """The structure as submitted, with each component's parallelism as it is now
        (a rebalance may have changed it)."""
        topology = self.c.read_model().find(id)
        structure = self.c.code.structure(topology.id)
        return structure_to_thrift(structure.with_parallelism(topology.base.component_executors))

    @_op("getUserTopology", topology=True)
    def getUserTopology(self, id):  # noqa: A002
        return self.getTopology(id)

    @_op("getLeader")
    def getLeader(self):
        """The leader's summary; while ZooKeeper is unreachable the last leader seen (this
        nimbus when it leads), marked stale, or a refusal that names ZooKeeper."""
        leader = self.leader_of()
        for summary in self._nimbuses():
            if f"{summary.host}:{summary.port}" == leader:
                return self.answers.stamped(summary)
        if leader == f"{self.host}:{self.port}":  # not read from /nimbuses before the outage
            me = self._summary(self.host, self.port, _STARTED, True, __version__)
            return self.answers.stamped(me)
        stale = self.c.reads.stale()
        why = "no nimbus leads now" if stale is None else f"no nimbus leader known: {stale.cause}"
        raise TApplicationException(TApplicationException.INTERNAL_ERROR, why)

    @_op("setTopologyConf", topology=True, acts=True)
    def setTopologyConf(self, name, key, jsonValue):
        if key in SUBMITTER_KEYS:
            raise T.InvalidTopologyException(msg=f"{key} is recorded by nimbus at submit")
        self.c.requests.set_config(name, key, jsonValue)

    @_op("isTopologyNameAllowed")
    def isTopologyNameAllowed(self, name):
        return name_problem(name) is None and not self.c.read_model().name_taken(name)

    def _summary(self, host: str, port: int, started: float, is_leader: bool, version: str) -> Any:
        return T.NimbusSummary(
            host=host,
            port=port,
            uptime_secs=int(time.time() - started),
            isLeader=is_leader,
            version=storm_compatible(version),
            squall_version=version,
        )

    def _nimbuses(self) -> list[Any]:
        """Every registered nimbus (/nimbuses), the leader marked."""
        leader = self.leader_of()
        return [
            self._summary(n.host, n.port, n.start, key == leader, n.version)
            for key, n in sorted(self.c.reads.read_nimbuses().items())
        ]
