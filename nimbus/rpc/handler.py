"""Thrift method implementations. Writes become events decided on the controller thread;
reads answer from the controller's published (immutable) model; code uploads and downloads
go straight to the inbox and the code store, never through the controller's queue.

Declared Thrift exceptions pass through to the client; anything else is logged and answered
with a TApplicationException, so an internal error fails one call and never the connection
or the server.

Every method is authorized first (`_op`): the caller's identity (request_context, bound by the
server from the TLS peer certificate), Storm's operation name and, for a topology operation,
that topology's conf go to nimbus.authorizer; a denial is an AuthorizationException naming
the principal and the operation, and is logged.
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
from squall.nimbus.reads.run_state import (
    NIMBUS,
    has_unplaced,
    recent_error,
    refusal_cause,
    run_count,
    run_status,
)
from squall.nimbus.reads.ui_reads import UiReads
from squall.nimbus.rpc import request_context
from squall.nimbus.rpc.authorizer import (
    NOOP,
    SUBMITTER_KEYS,
    Acl,
    UnixGroups,
    authorizer_kind,
    decide,
    denial,
)
from squall.nimbus.rpc.credential_calls import CredentialCalls
from squall.nimbus.rpc.daemon_calls import DaemonCalls
from squall.nimbus.rpc.log_debug_calls import LogDebugCalls
from squall.nimbus.rpc.operations import op as _op
from squall.nimbus.rpc.profiler_calls import ProfilerCalls
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


class NimbusHandler(UiReads, LogDebugCalls, BlobCalls, ProfilerCalls, CredentialCalls, DaemonCalls):
    def __init__(
        self,
        controller: Controller,
        conf: dict[str, Any],
        host: str,
        port: int,
        leader_of: Callable[[], str | None],
    ):
        self.c = controller
        self.conf = conf
        self.host = host
        self.port = port
        self.leader_of = leader_of
        self.authorizer = authorizer_kind(conf)
        self.acl = Acl.from_conf(conf)
        cache_secs = conf["storm.group.mapping.service.cache.duration.secs"]
        self.groups = UnixGroups(cache_secs, time.monotonic)
        self._init_blobs()  # Storm 2 blobstore (nimbus/blobs/blob_calls.py)

    def _authorize(self, operation: str, topology: str | None) -> str | None:
        """Judge the call; the id of the topology it was judged on (`topology` is a name
        or an id), which the call then acts on: by its name, the controller would find
        whichever topology has that name when the job runs, a new one of the same name
        resubmitted meanwhile by someone else. None when nothing is judged."""
        if self.authorizer == NOOP:
            return None
        ctx = request_context.current()
        tid, topology_conf = None, None
        if topology is not None:
            tid = self.c.read_model().find(topology).id  # NotAliveException: none
            topology_conf = self._topology_conf(tid)
        groups = self.groups(ctx.principal) if ctx.principal is not None else frozenset()
        if decide(self.authorizer, self.acl, ctx.principal, groups, operation, topology_conf):
            return tid
        message = denial(ctx.principal, operation, topology)
        log.warning("denied: %s (from %s)", message, ctx.address)
        raise T.AuthorizationException(msg=message)

    def _topology_conf(self, name_or_id: str) -> dict[str, Any]:
        """The conf the authorizer judges a topology operation by (NotAliveException when
        there is no such topology)."""
        topology = self.c.read_model().find(name_or_id)
        return dict(topology.conf) or self.c.code.conf(topology.id)

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
        upload = self._checked_submit_credentials(creds, principal) if creds else None
        json_conf = _with_submitter(jsonConf, principal)
        tid = self.c.submit(name, uploadedJarLocation, json_conf, topology, status)
        if upload:
            self._store_credentials(tid, upload, principal or "")

    @_op("killTopology", topology=True, acts=True)
    def killTopology(self, name):
        self.c.kill(name, None)

    @_op("killTopology", topology=True, acts=True)
    def killTopologyWithOpts(self, name, options):
        self.c.kill(name, options.wait_secs if options else None)

    @_op("activate", topology=True, acts=True)
    def activate(self, name):
        self.c.activate(name)

    @_op("deactivate", topology=True, acts=True)
    def deactivate(self, name):
        self.c.deactivate(name)

    @_op("rebalance", topology=True, acts=True)
    def rebalance(self, name, options):
        options = options or T.RebalanceOptions()
        self.c.rebalance(name, options.wait_secs, options.num_workers, options.num_executors)

    @_op("fileUpload")
    def beginFileUpload(self):
        return self.c.begin_upload(request_context.current().principal)

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
            {tid: self._run_status(model, t) for tid, t in topologies.items()},
            model.blacklist.reasons(),
        )
        for topology in cluster.topologies:
            self._stamped(topology)
        return self._stamped(cluster)

    def _run_status(self, model: Any, topology: Any, errors: Any = None) -> str:
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

    @_op("getTopologyInfo", topology=True)
    def getTopologyInfo(self, id):  # noqa: A002
        model = self.c.read_model()
        return self._stamped(self._topology_info(model.find(id), model))

    # seconds a refused certificate stays a possible cause (supervisors retry each
    # supervisor.heartbeat.frequency.secs; the refusal log notes each one)
    REFUSAL_WITHIN_SECS = 120.0
    # the server's (peer, reason) of recently refused certificates; daemon.py sets it
    refused_certificates: Callable[[float, float], list[tuple[str, str]]] = staticmethod(
        lambda now, within: []
    )

    def _with_nimbus_word(self, topology: Any, errors: dict[str, list]) -> dict[str, list]:
        """`errors` and, for a topology with tasks placed nowhere while nimbus has refused a
        certificate, that refusal as nimbus's error of the topology (reaches get-errors)."""
        if NIMBUS in errors or not has_unplaced(topology):
            return errors
        refused = self.refused_certificates(time.monotonic(), self.REFUSAL_WITHIN_SECS)
        cause = refusal_cause(refused)
        if cause is None:
            return errors
        entry = {"error": cause, "time_secs": int(self.c.wall()), "host": self.host}
        return {**errors, NIMBUS: [{**entry, "port": self.port}]}

    def _topology_info(self, topology: Any, model: Any) -> Any:
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
            sched_status=self._run_status(model, topology, errors),
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
                return self._stamped(summary)
        if leader == f"{self.host}:{self.port}":  # not read from /nimbuses before the outage
            return self._stamped(self._summary(self.host, self.port, _STARTED, True, __version__))
        stale = self.c.reads.stale()
        why = "no nimbus leads now" if stale is None else f"no nimbus leader known: {stale.cause}"
        raise TApplicationException(TApplicationException.INTERNAL_ERROR, why)

    @_op("setTopologyConf", topology=True, acts=True)
    def setTopologyConf(self, name, key, jsonValue):
        if key in SUBMITTER_KEYS:
            raise T.InvalidTopologyException(msg=f"{key} is recorded by nimbus at submit")
        self.c.set_config(name, key, jsonValue)

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
